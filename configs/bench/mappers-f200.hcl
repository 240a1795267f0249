# Keccak-f[200] (w = 8, 18 rounds, one block) through both layerers and all
# four models, 64 samples: the mapping stage of configs/mappers.hcl at a
# size that runs in minutes on a shared machine (issue 19; BENCHMARKS.md).
# The forward passes are ~96 % of its CPU time, as in the full SHA3-256
# pipeline (configs/bench/mappers-sha3-256.hcl).
#
#   go build -o bin/tcforge ./host/cmd/tcforge
#   /usr/bin/time -v bin/tcforge run --in-process --cpuprofile f200.prof --progress never --out out/bench configs/bench/mappers-f200.hcl

pipeline "mappers-f200" {
  samples = 64

  construction "keccak" {
    log_w   = 3
    rate    = 100
    blocks  = 1
    padding = "none"
  }

  layerer "reifier" {}
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}
