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
  # depth = 2 + n_b(2 + 6·24), width = 11·1600 + max(0, m − r), m the
  # message bits (not the padding constants).
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

  # Arbitrary output length: each further squeeze adds one f (6·rounds
  # levels). Width: the widest level is a θ level, with the message bits
  # not yet absorbed carried beside the first (m − r: message bits, not the
  # padding constants; 2000 bits: 17,600 + 912 = 18,512, where the padded
  # input would say 18,688) or the squeezed output carried beside the last
  # (r per squeeze).
  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds) + 6 * construction.squeezes * construction.rounds
    width = 11 * construction.b + max(0, construction.message_bits - construction.rate, construction.rate * construction.squeezes)
  }
}

pipeline "sha3-current" {
  # The same standard instances through today's Reifier release
  # (reifier mode = "current"; docs/design.md). SHA3-224 and SHA3-256 are
  # Reifier's own figures (compile_keccak at contramont/reifier 0fd3dcb):
  # 121 levels, 17,600 wide, 653,024 / 653,056 gates, 5,359,448 /
  # 5,351,736 edges.
  matrix {
    preset = ["sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128"]
  }

  construction "keccak" {
    preset = matrix.preset
  }

  layerer "reifier" {
    mode = "current"
  }

  # Five levels a round and an output row; every round a full θ level;
  # 17 gates a state bit a round (θ: 11 counters and a parity; χ: inhib,
  # the copy of a[x], 2 counters, a parity) and the outputs; 141 edges a
  # state bit a round, less round 1's θ edges from the b − m constant
  # state bits (each an operand of 11 sums of 11 counters), and one an
  # output.
  expect "reifier" {
    depth = 5 * construction.rounds + 1
    width = 11 * construction.b
    gates = 17 * construction.b * construction.rounds + construction.output_bits
    edges = 141 * construction.b * construction.rounds - 121 * (construction.b - construction.message_bits) + construction.output_bits
  }
}
