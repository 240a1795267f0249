# Full SHA3-512 through both transformer mappers (all four models), for the
# memory bound: peak RSS of the largest process.
#
#   /usr/bin/time -v bin/tcforge run configs/bench/sha3-512-mappers.hcl

pipeline "sha3-512-mappers" {
  samples = 64
  construction "keccak" {
    preset = "sha3-512"
  }
  layerer "reifier" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}
