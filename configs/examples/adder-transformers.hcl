# The example external adder through the tokens-as-states mapper (one token
# a bit position, from the adder's hints), verified in float32. From n = 15
# on, fusion's carry sums (Σ|w·x| up to 5.7·10⁶) are refused: a float32
# LayerNorm output's relative error would exceed a step's margin.
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
