# Full SHA-256 through both transformer mappings, every model verified by
# a float32 forward pass against the layered circuit, which is verified
# against crypto/sha256. exact_in lists the float formats whose host pass
# (float32 and float64) reproduced every bit on the samples (fp16 and bf16
# are not checked; docs/export.md): every model here, "fp64 fp32".
#
#   go run ./host/cmd/tcforge run --out out configs/sha2-mappers.hcl

pipeline "sha2-mappers" {
  # Float32-exact models: 8-bit chunks, c = w/8 = 4 chunks an addition.
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "reifier" {
    max_weight = 65536
  }
  layerer "fusion" {
    max_weight = 65536
  }

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 8) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 8) * construction.rounds + 1)
  }
}

pipeline "sha2-mappers-default" {
  # The default bound (16-bit chunks, the shallowest circuit): 193 blocks.
  # One token per gate: about
  # 300,000 tokens, hard attention (the float32 forward pass costs about
  # tokens × blocks; reifier's 654,526 tokens × 388 blocks took 5 minutes).
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "tokens-as-gates" { attention = "hard" }

  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-mappers-bounds" {
  # Tighter bounds: narrower chunks, more blocks.
  samples = 64
  matrix {
    max_weight = [2048, 64]
  }

  construction "sha2" {
    preset = "sha256"
  }

  layerer "fusion" {
    max_weight = matrix.max_weight
  }

  mapper "no-attention" { variant = "mlp" }
}
