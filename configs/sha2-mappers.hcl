# Full SHA-256 through both transformer mappings (the SHA-256 pipeline of
# configs/mappers.hcl, on its own), every model verified by a float32
# forward pass against the layered circuit, which is verified against
# crypto/sha256. exact_in is the narrowest float format that holds every
# weight and pre-activation of the model exactly.
#
#   go run ./host/cmd/tcforge run --out out configs/sha2-mappers.hcl

pipeline "sha2-mappers" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "reifier" {}
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-mappers-bounds" {
  # Tighter bounds: narrower chunks, more blocks, narrower float formats.
  samples = 64
  matrix {
    max_weight = [65536, 2048, 64]
  }

  construction "sha2" {
    preset = "sha256"
  }

  layerer "fusion" {
    max_weight = matrix.max_weight
  }

  mapper "no-attention" { variant = "mlp" }
}
