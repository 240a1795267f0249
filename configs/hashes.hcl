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

# BLAKE2s-256 (RFC 7693), BLAKE3 (hash mode) and Ascon-Hash256/XOF128
# (SP 800-232), on sdk/blake and sdk/sponge (docs/writing-a-hash.md),
# verified against golang.org/x/crypto/blake2s (BLAKE2s at 10 rounds) or
# the independent blake2sref, blake3ref and asconref (pinned to RFC 7693,
# the BLAKE3 team's test vectors and NIST's ACVP vectors). Laws (n_b
# blocks, r rounds; additions cut into c = 2 chunks of 16 bits at the
# default max_weight):
#
#   BLAKE2s  reifier  n_b·(48r + 2) + 2: a round is two G's, eight additions
#                     in sequence, each with its XOR 2(1 + c) = 6 levels (as
#                     SHA-2's); any message length. Full: 482·n_b + 2.
#            fusion   n_b·(24r − 1): 1 + c = 3 levels an addition, the
#                     finalising XOR sharing a level. Full blocks: fusion
#                     folds the constant words of a short block (one block
#                     of 1 to 63 bytes: 237 to 239) and the empty message's
#                     constant digest (depth 1). Full: 239·n_b.
#   BLAKE3   reifier  (B + h)·(48r + 2) + 2,
#            fusion   B·(24r − 1) + h·(24r − 2), where B = min(n_b, 16) is
#                     the longest chain of compressions (a chunk's 16
#                     blocks; chunks compress side by side) and
#                     h = ⌈log₂ chunks⌉ the parents on the path to the root;
#                     G and the round are BLAKE2s's, 7 of them. Full, one
#                     block: 340 and 167; one chunk (1024 bytes): 5,410 and
#                     2,672 (configs/hashes-heavy.hcl).
#   Ascon    reifier  9r·P + n_b + ⌈m/64⌉ + 2,
#            fusion   2r·P, where P = n_b + ⌈out/64⌉ − 1 is the number of
#                     permutations after the initial one (precomputed:
#                     constants), m the message bits and out the output
#                     bits (256 for Ascon-Hash256). A round of Ascon-p is
#                     the S-box's XOR, AND-NOT, XOR, XOR (2 + 1 + 2 + 2
#                     levels) and the linear layer's 3-input XOR (2) in
#                     reifier; two levels in fusion, whose switching
#                     functions take the S-box and the linear layer one
#                     level each. XORing message bits into the rate costs
#                     reifier 2 levels a block, a block of padding only 1 (a
#                     NOT). Fusion folds messages of a few bits (0 or 1 bit:
#                     every output a function of at most one variable, depth
#                     1; 7 bits: 95). Full Ascon-Hash256, one block: 436, 96.

pipeline "blake2s-full" {
  matrix {
    blocks = [1, 2]
  }

  construction "blake2s" {
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (48 * 10 + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * (24 * 10 - 1)
  }
}

pipeline "blake2s-lengths" {
  # Whole-byte messages through x/crypto: the empty one, "abc"'s length,
  # the shortest of two blocks.
  matrix {
    message_bits = [0, 24, 520]
  }

  construction "blake2s" {
    message_bits = matrix.message_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (48 * 10 + 2) + 2
  }
}

pipeline "blake2s-rounds" {
  matrix {
    rounds = [1, 2, 5, 9]
    blocks = [1, 2]
  }

  construction "blake2s" {
    rounds = matrix.rounds
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (48 * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * (24 * construction.rounds - 1)
  }
}

pipeline "blake3" {
  # Full rounds, one chunk of one and two blocks; one round, a tree of two
  # chunks (configs/hashes-heavy.hcl has full chunks and deeper trees; the
  # BLAKE3 team's test vectors check 1024 bytes to 102,400 at full rounds:
  # plugins/blake3).
  matrix {
    rounds = [7]
    blocks = [1, 2]
  }
  matrix {
    rounds = [1]
    blocks = [17]
  }

  construction "blake3" {
    rounds = matrix.rounds
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = (min(construction.blocks, 16) + ceil(log2(construction.chunks))) * (48 * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = min(construction.blocks, 16) * (24 * construction.rounds - 1) + ceil(log2(construction.chunks)) * (24 * construction.rounds - 2)
  }
}

pipeline "ascon" {
  # Ascon-Hash256 at full and reduced rounds, one to three blocks, and
  # messages that end inside a byte (as NIST's ACVP vectors do);
  # Ascon-XOF128 squeezing 64, 65 and 512 bits.
  matrix {
    rounds = [1, 2, 12]
    blocks = [1, 2, 3]
  }
  matrix {
    message_bits = [63, 64, 127, 129]
  }
  matrix {
    mode        = ["xof128"]
    output_bits = [64, 65, 512]
  }

  construction "ascon" {
    mode         = matrix.mode
    rounds       = matrix.rounds
    blocks       = matrix.blocks
    message_bits = matrix.message_bits
    output_bits  = matrix.output_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 9 * construction.rounds * (construction.blocks + ceil(construction.output_bits / 64) - 1) + construction.blocks + ceil(construction.message_bits / 64) + 2
  }
  expect "fusion" {
    depth = 2 * construction.rounds * (construction.blocks + ceil(construction.output_bits / 64) - 1)
  }
}

pipeline "ascon-short" {
  # The empty message and messages of a few bits: reifier's law holds,
  # fusion folds them (see above).
  matrix {
    message_bits = [0, 1, 7]
  }

  construction "ascon" {
    message_bits = matrix.message_bits
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 9 * 12 * 4 + 1 + ceil(construction.message_bits / 64) + 2
  }
}
