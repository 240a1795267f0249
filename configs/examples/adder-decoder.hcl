# The example external adder as decoders (tokens as time): one, two and
# three circuit levels a step, each model checked token by token.
#
#   go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   go run ./host/cmd/tcforge run --plugin-dir bin configs/examples/adder-decoder.hcl

pipeline "adder-decoder" {
  samples = 64

  matrix {
    k = [1, 2, 3]
  }

  construction "adder" {
    n = 16
  }

  layerer "reifier" {}

  mapper "decoder" {
    levels_per_step = matrix.k
  }
}
