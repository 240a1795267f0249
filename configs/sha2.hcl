# SHA-2 (FIPS 180-4) through both backends, every point verified: the
# logic circuit against Go's crypto/sha256 and crypto/sha512 (full
# rounds, whole-byte messages) or the independent sha2ref (reduced
# rounds, any bit length, the compression function), each layered
# circuit against the logic circuit.
#
#   go run ./host/cmd/tcforge run --out out configs/sha2.hcl
#
# Modular addition is the SUMBIT op (bit k of a weighted sum of bits); the
# layerers cut each addition into chunks of 16 bits whose sums stay within
# max_weight (default 2^22, so every pre-activation is exact in float32):
# c = w/16 chunks, 2 for SHA-224/256, 4 for the 64-bit variants
# (docs/sha2.md).
#
# Depth laws (n_b blocks, r rounds; derived in docs/sha2.md):
#
#   fusion   n_b·((1 + c)·r + 1)         SHA-256: 193, SHA-512: 401
#   reifier  n_b·(2(1 + c)·r + 2) + 2    SHA-256: 388, SHA-512: 804

pipeline "sha2-presets" {
  # One block each: the longest whole-byte message that pads to one block.
  matrix {
    preset = ["sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256"]
  }

  construction "sha2" {
    preset = matrix.preset
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-multiblock" {
  # Messages of several blocks, including lengths that are not whole
  # bytes (verified against sha2ref) and the padding boundaries.
  matrix {
    preset       = ["sha256"]
    message_bits = [447, 448, 1000, 1500]
  }
  matrix {
    preset       = ["sha512"]
    message_bits = [895, 1200]
  }

  construction "sha2" {
    preset       = matrix.preset
    message_bits = matrix.message_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-rounds" {
  # Reduced rounds (verified against sha2ref), one and two blocks.
  matrix {
    preset = ["sha256"]
    rounds = [1, 2, 4, 8, 16, 17, 24, 32]
    blocks = [1, 2]
  }
  matrix {
    preset = ["sha512"]
    rounds = [1, 4, 16, 40]
    blocks = [1]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-compress" {
  # The bare compression function: chaining value and one block in, the
  # new chaining value out (verified against sha2ref).
  matrix {
    preset = ["sha256", "sha512"]
  }

  construction "sha2" {
    preset = matrix.preset
    mode   = "compress"
  }

  layerer "reifier" {}
  layerer "fusion" {}
}

pipeline "sha2-bounds" {
  # Full SHA-256 under tighter bounds on the sums of additions: narrower
  # chunks, more levels (the model rows of configs/sha2-mappers.hcl give
  # the float format each needs).
  matrix {
    max_weight = [4194304, 65536, 2048, 64]
  }

  construction "sha2" {
    preset = "sha256"
  }

  layerer "reifier" {
    max_weight = matrix.max_weight
  }
  layerer "fusion" {
    max_weight = matrix.max_weight
  }
}
