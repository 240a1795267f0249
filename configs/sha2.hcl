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
# Laws (n_b blocks, r rounds, c = w/16 chunks at the default bound, w/b
# at bounds that give every addition b-bit chunks with b ≥ 4 for
# SHA-224/256, b = 16 for the 64-bit variants; derived in docs/sha2.md):
#
#   depth  fusion (objective "depth")  n_b·((1 + c)·r + 1)           SHA-256: 193, SHA-512: 401
#          fusion (objective "size")   n_b·(2(1 + c)·r + 2) − (1 + c)  SHA-256: 383, SHA-512: 797
#          fusion (objective "round")  as "depth" (it keeps the depth-first plan) SHA-256: 193
#          reifier                     n_b·(2(1 + c)·r + 2) + 2       SHA-256: 388, SHA-512: 804
#   width  reifier, one block          SHA-224/256, r ≥ 62: 1952 + 32·⌊(r − 31)/2⌋   (2,464)
#                                      SHA-384/512/512-t, r ≥ 63: 2561 + 64·⌊(r − 1)/2⌋ (5,057)
#          (below, padding words still in flight at that level: reifier places
#          constants below each reader instead of carrying them, so the width
#          is less by up to their bits and has no closed form)
#   gates  reifier, besides copies     n_b·(G_r·r + G_s·(r − 16)⁺ + G_f) + constants
#                                      (plugins/sha2 TestReifierGateLaw; copies have no law yet)
#
# Fusion's widths and gates come out of its copy-minimising local search
# and have no closed form; the tables in docs/sha2.md give them.

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
    width = construction.w == 32 ? 1952 + 32 * floor((construction.rounds - 31) / 2) : 2561 + 64 * floor((construction.rounds - 1) / 2)
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
  # Every reduced round count of SHA-256, one block, and a spread of
  # SHA-512's (verified against sha2ref; 64 and 80 rounds against the
  # standard library).
  samples = 64
  matrix {
    preset = ["sha256"]
    rounds = range(1, 32)
  }
  matrix {
    preset = ["sha512"]
    rounds = [1, 2, 3, 4, 5, 8, 15, 16, 17, 18, 24, 30, 40]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
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

pipeline "sha2-rounds-wide" {
  # The rounds where reifier's widest level is the one where the last
  # message-schedule words meet the rounds and no padding word is among
  # the words in flight there (SHA-224/256 from 62 rounds, SHA-384/512/512-t
  # from 63): its width law, one block.
  samples = 64
  matrix {
    preset = ["sha256"]
    rounds = [62, 63, 64]
  }
  matrix {
    preset = ["sha224"]
    rounds = [63]
  }
  matrix {
    preset = ["sha512"]
    rounds = [63, 64, 71, 72, 79, 80]
  }
  matrix {
    preset = ["sha384", "sha512-256"]
    rounds = [80]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) + 2
    width = construction.w == 32 ? 1952 + 32 * floor((construction.rounds - 31) / 2) : 2561 + 64 * floor((construction.rounds - 1) / 2)
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}

pipeline "sha2-rounds-mid" {
  # The rounds below: the same widest level, but with padding words of the
  # message (72 bits for SHA-256's one-block default) among the words in
  # flight. Reifier places those constants below each level that reads
  # them rather than carrying them, so the width is the law's less up to
  # their bits (docs/sha2.md): no closed form, depth laws only.
  samples = 64
  matrix {
    preset = ["sha256"]
    rounds = range(32, 62)
  }
  matrix {
    preset = ["sha224"]
    rounds = [32, 47]
  }
  matrix {
    preset = ["sha512"]
    rounds = [41, 42, 47, 48, 55, 56]
  }
  matrix {
    preset = ["sha384", "sha512-256"]
    rounds = [41]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
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

pipeline "sha2-rounds-blocks" {
  # Reduced rounds over two and three blocks (verified against sha2ref).
  samples = 64
  matrix {
    preset = ["sha256"]
    rounds = [1, 2, 4, 8, 16, 17, 24, 32, 48]
    blocks = [2, 3]
  }
  matrix {
    preset = ["sha512"]
    rounds = [1, 4, 17]
    blocks = [2]
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

pipeline "sha2-size" {
  # Fusion's other objective: fewest gates + edges. Forms that many gates
  # read are materialised, so a round costs reifier's 2(1 + c) levels,
  # except the first round of the first block (its Σ, Ch and Maj read the
  # IV and fold into constants; its chunk sums read message bits): 1 + c.
  samples = 64
  matrix {
    preset = ["sha256"]
    rounds = [1, 2, 16, 17, 33, 64]
    blocks = [1, 2]
  }
  matrix {
    preset = ["sha512"]
    rounds = [1, 4, 17]
    blocks = [1, 2]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
    blocks = matrix.blocks
  }

  layerer "fusion" {
    objective = "size"
  }

  expect "fusion" {
    depth = construction.blocks * (2 * (1 + construction.w / 16) * construction.rounds + 2) - (1 + construction.w / 16)
  }
}

pipeline "sha2-round" {
  # Fusion's "round" objective (values only parities read kept as integer
  # forms known modulo 2; one level a Keccak round) beside depth first.
  # Every SUMBIT reads its operands exact, and in SHA-2 nearly every
  # parity (Σ, σ, the XOR in Ch) feeds an addition, so the round plan is
  # not shallower and the objective keeps the depth-first plan: the same
  # depth n_b·((1 + c)·r + 1), width and gates (docs/fusion.md).
  samples = 64
  matrix {
    preset    = ["sha256"]
    rounds    = [1, 2, 3, 4, 5, 6, 7, 8, 17, 64]
    objective = ["depth", "round"]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
  }

  layerer "fusion" {
    objective = matrix.objective
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

pipeline "sha2-bounds-laws" {
  # Bounds under which every addition (round, schedule, feed-forward)
  # gets the same chunk width b, the largest power of two with
  # (m + 1)·2^b ≤ max_weight for m = 8 and m = 2 words alike (2^24: 16
  # bits, 2^16: 8, 2^8: 4). The depth laws hold with c = w/b as long as
  # chunk 0 of Σ₀ or Σ₁ reads the top chunk, so that a round cannot start
  # before the last one's top chunk: for SHA-224/256 (Σ₁ rotates by 25)
  # b ≥ 4; for the 64-bit variants b = 16 only (docs/sha2.md).
  samples = 64
  matrix {
    preset     = ["sha256"]
    rounds     = [64]
    max_weight = [16777216, 65536, 256]
  }
  matrix {
    preset     = ["sha512"]
    rounds     = [8]
    max_weight = [16777216]
  }

  construction "sha2" {
    preset = matrix.preset
    rounds = matrix.rounds
  }

  layerer "reifier" {
    max_weight = matrix.max_weight
  }
  layerer "fusion" {
    max_weight = matrix.max_weight
  }

  # b = the largest power of two ≤ ⌊log₂⌊max_weight/9⌋⌋ (m = 8 words).
  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / pow(2, floor(log2(floor(log2(floor(matrix.max_weight / 9))))))) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / pow(2, floor(log2(floor(log2(floor(matrix.max_weight / 9))))))) * construction.rounds + 1)
  }
}
