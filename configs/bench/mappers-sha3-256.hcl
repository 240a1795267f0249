# The full SHA3-256 pipeline of configs/mappers.hcl alone (both layerers,
# all four models each, 64 samples): the mapping stage's timing benchmark
# (issue 19; BENCHMARKS.md).
#
#   go build -o bin/tcforge ./host/cmd/tcforge
#   /usr/bin/time -v bin/tcforge run --progress never --out out/bench configs/bench/mappers-sha3-256.hcl

pipeline "mappers-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {}
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds)
    width = 11 * construction.b + (construction.blocks - 1) * construction.rate
  }
}
