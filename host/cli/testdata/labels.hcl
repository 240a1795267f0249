# A toy Keccak (w = 1, one round) mapped by every mapper, for
# TestExportLabels: `tcforge run --export DIR` writes each model's labels.
pipeline "labels-toy" {
  samples = 8

  construction "keccak" {
    log_w   = 0
    rate    = 16
    rounds  = 1
    padding = "none"
  }

  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-states" { tokens = 1 }
}
