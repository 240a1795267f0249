# MD5 (RFC 1321) and SHA-1 (FIPS 180-4) through both backends, at full size
# and at reduced steps, every point verified: the logic circuit against
# Go's crypto/md5 and crypto/sha1 (full steps, whole-byte messages) or the
# independent md5ref and sha1ref (reduced steps, any bit length), each
# layered circuit against the logic circuit.
#
#   go run ./host/cmd/tcforge run --out out configs/hashes.hcl
#
# Both plugins are written on the SDK's word helpers (docs/writing-a-hash.md).
# Laws (n_b blocks, s steps per compression; every addition is cut into
# 16-bit chunks at the default max_weight, as for SHA-256):
#
#   MD5    reifier  n_b·(P(s) + 2) + 4, P(s) = 7·min(s, 32) + 8·min((s − 32)⁺, 16) + 9·(s − 48)⁺
#                   (a step of rounds 1–2 (F = Ch, G = Mux) costs 7 levels, of round 3
#                   (H, an XOR: counters and parity) 8, of round 4 (I = C ⊕ (B ∨ ¬D)) 9)
#                   full: 502 (one block), 1000 (two)
#          fusion   n_b·(4s + 1) for s ≥ 2: 257 (one block), 514 (two); the XORs fold
#                   into linear forms, so every round costs the same. Fusion folds
#                   constants (docs/fusion.md), which bends the law at tiny sizes: at
#                   s = 1 a step reads the constant IV but for one message word, and
#                   the depth is 6 for one block, 5·n_b for more (pipeline
#                   "md5-one-step"); the empty message's digest is a constant, one
#                   level of constant gates (depth 1) for MD5 and SHA-1 alike.
#   SHA-1  reifier  n_b·(4s + 2) + 3: 325 (one block), 647 (two)
#          fusion   n_b·(2s + 1) + 1: 162 (one block), 323 (two)
#
# The full-size MD5 point (one block) is the one the first-plugin trial
# measured (fusion: depth 257, width 744, 152,472 gates; reifier 502).

pipeline "md5-full" {
  # Whole-byte messages through crypto/md5: the empty one, the longest of
  # one block (55 bytes), the shortest of two (56 bytes), and two blocks.
  matrix {
    message_bits = [0, 440, 448]
  }
  matrix {
    blocks = [1, 2]
  }

  construction "md5" {
    message_bits = matrix.message_bits
    blocks       = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (7 * 32 + 8 * 16 + 9 * 16 + 2) + 4
  }
  expect "fusion" {
    depth = construction.message_bits == 0 ? 1 : construction.blocks * (4 * 64 + 1)
  }
}

pipeline "md5-steps" {
  # Reduced steps across the four rounds' boundaries, against md5ref; one
  # message that is not whole bytes.
  matrix {
    steps  = [2, 16, 17, 32, 33, 48, 49, 63]
    blocks = [1, 2]
  }
  matrix {
    steps        = [20]
    message_bits = [1001]
  }

  construction "md5" {
    steps        = matrix.steps
    blocks       = matrix.blocks
    message_bits = matrix.message_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (7 * min(construction.steps, 32) + 8 * min(max(construction.steps - 32, 0), 16) + 9 * max(construction.steps - 48, 0) + 2) + 4
  }
  expect "fusion" {
    depth = construction.blocks * (4 * construction.steps + 1)
  }
}

pipeline "md5-one-step" {
  # One step: fusion folds the constants the step reads (docs/fusion.md).
  matrix {
    blocks = [1, 2, 3]
  }

  construction "md5" {
    steps  = 1
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (7 + 2) + 4
  }
  expect "fusion" {
    depth = construction.blocks == 1 ? 6 : 5 * construction.blocks
  }
}

pipeline "sha1-full" {
  matrix {
    message_bits = [0, 440, 448]
  }
  matrix {
    blocks = [1, 2]
  }

  construction "sha1" {
    message_bits = matrix.message_bits
    blocks       = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (4 * 80 + 2) + 3
  }
  expect "fusion" {
    depth = construction.message_bits == 0 ? 1 : construction.blocks * (2 * 80 + 1) + 1
  }
}

pipeline "sha1-steps" {
  # Reduced steps across the schedule's start (17) and the boundaries of
  # Ch, parity and Maj (20, 40, 60), against sha1ref.
  matrix {
    steps  = [1, 2, 16, 17, 20, 21, 40, 41, 60, 61, 79]
    blocks = [1, 2]
  }
  matrix {
    steps        = [30]
    message_bits = [1001]
  }

  construction "sha1" {
    steps        = matrix.steps
    blocks       = matrix.blocks
    message_bits = matrix.message_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (4 * construction.steps + 2) + 3
  }
  expect "fusion" {
    depth = construction.blocks * (2 * construction.steps + 1) + 1
  }
}
