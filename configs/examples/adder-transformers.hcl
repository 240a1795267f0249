# The example external adder through the tokens-as-states mapper (one token
# a bit position when the adder sets its hints), verified in float32.
#
#   go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   go run ./host/cmd/tcforge run --plugin-dir bin configs/examples/adder-transformers.hcl

pipeline "adder-transformers" {
  samples = 64

  matrix {
    n = [4, 8, 16]
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
