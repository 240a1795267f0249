# The example external adder through the tokens-as-states mapper (one token
# a bit position, from the adder's hints), verified in float32. Larger n
# map too (n = 32: plugins/tokensasstates TestBalance): the mapper bounds
# fusion's carry partials by their steps (Σ|w·x| ≤ 17,982) and, from
# n = 14, adds a balance dimension that keeps LayerNorm's mean at 0.
#
#   go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   go run ./host/cmd/tcforge run --plugin-dir bin configs/examples/adder-transformers.hcl

pipeline "adder-transformers" {
  samples = 64

  matrix {
    n = [4, 8, 14]
  }

  construction "adder" {
    n = matrix.n
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = matrix.n
    assign = "interleave"
  }
}
