# Full-size SHA-3 (w = 64, Keccak-f[1600], 24 rounds) through the
# Reifier-style backend, verified against Go's crypto/sha3.
#
#   go run ./host/cmd/tcforge run --out out configs/sha3.hcl

pipeline "sha3" {
  # One block each: the longest whole-byte message that pads to one block.
  matrix {
    preset = ["sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128"]
  }

  construction "keccak" {
    preset = matrix.preset
  }

  layerer "reifier" {}

  # The paper's laws at w = 64 (24 rounds, no zero round constant):
  # depth = 2 + n_b(2 + 6·24), width = 11·1600 + p − r.
  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds)
    width = 11 * construction.b + (construction.blocks - 1) * construction.rate
  }
}

pipeline "sha3-multiblock" {
  # Messages spanning several blocks, and SHAKE128 squeezing past one rate block.
  matrix {
    preset       = ["sha3-256"]
    message_bits = [2000, 4000]
    output_bits  = [256]
  }
  matrix {
    preset       = ["shake128"]
    message_bits = [1000]
    output_bits  = [3000]
  }

  construction "keccak" {
    preset       = matrix.preset
    message_bits = matrix.message_bits
    output_bits  = matrix.output_bits
  }

  layerer "reifier" {}

  # Arbitrary output length: each further squeeze adds one f (6·rounds levels).
  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds) + 6 * construction.squeezes * construction.rounds
  }
}
