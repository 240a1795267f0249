# Reifier-style backend vs the optimizing backend fusion, side by side
# (issue 4). Every pipeline names both layerers: each point yields one row
# per backend, and the terminal table shows fusion's depth, width, gates,
# edges and compile time as ratios to reifier's on the same circuit.
#
#   go run ./host/cmd/tcforge run --jobs 1 --out out configs/compare.hcl
#
# (--jobs 1 keeps the measured compile times free of other points' load.)
#
# Laws (derived in docs/fusion.md; z = rounds whose w-bit round constant is
# 0, which reifier skips and fusion does not care about):
#
#   reifier, the paper's:  Keccak  depth = 2 + n_b·(2 + 6·rounds − z)
#                                  width = 11·25w + p − r
#   fusion, depth first:   Keccak  depth = 2·rounds·n_b + 1
#                                  width = 11·25w + p − r            (rounds ≥ 3)
#                          MD      depth = 2·rounds·n_b + 1
#                                  width = 11·25w + (n_b − 1)·block_bits
#                          Merkle  depth = 2·rounds·(log₂ n + 1) + 1
#                                  width = n·11·25w
#   fusion, size first:    Keccak  depth = 4·rounds·n_b, width as above
#   SHA-256 (c = w/16 = 2 chunks a modular addition; docs/sha2.md):
#     reifier depth = n_b·(2(1 + c)·rounds + 2) + 2, fusion n_b·((1 + c)·rounds + 1)
#
# With one or two rounds fusion's first round reads only the non-constant
# state bits and its last round computes only the θ sums that χ needs for
# the output bits, so the widths are those counts (see compare-keccak-rounds).
# On the paper's toy MD and Merkle points (4- or 8-bit chains, one or two
# rounds) the chain bits are low-degree functions of a few inputs and
# fusion collapses them far below these laws; those pipelines check only
# the paper's laws for reifier and show fusion beside them.

pipeline "compare-keccak-lanes" {
  # Every lane size at its standard round count 12 + 2·log_w: the padded
  # input (one or two blocks of rate ⌊25w/2⌋) xored into the zero state,
  # rate output bits. Both ends of fusion's trade-off.
  matrix {
    log_w     = [0, 1, 2, 3, 4, 5, 6]
    blocks    = [1, 2]
    objective = ["depth", "size"]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = floor(25 * pow(2, matrix.log_w) / 2)
    blocks  = matrix.blocks
    padding = "none"
  }

  layerer "reifier" {}
  layerer "fusion" {
    objective = matrix.objective
  }

  expect "reifier" {
    depth = 2 + matrix.blocks * (2 + 6 * construction.rounds - construction.zero_rc_rounds)
    width = 11 * construction.b + (matrix.blocks - 1) * construction.rate
  }

  # Depth first: θ's parity counters, then χ (and ι, and the next block's
  # absorbing xor) as switching functions of them: two levels a round.
  # Size first: the parity and χ forms are materialised as single gates
  # (two more levels a round) so that readers read one gate, not eleven.
  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * construction.rounds * matrix.blocks + 1 : 4 * construction.rounds * matrix.blocks
    width = 11 * construction.b + (matrix.blocks - 1) * construction.rate
  }
}

pipeline "compare-keccak-rounds" {
  # w = 64, SHA3-256's instance (1080-bit message, sha3 padding, 256
  # output bits) with 1 to 24 rounds.
  matrix {
    rounds = [1, 2, 4, 8, 12, 24]
  }

  construction "keccak" {
    preset = "sha3-256"
    rounds = matrix.rounds
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 2 + (2 + 6 * matrix.rounds - construction.zero_rc_rounds)
    width = 11 * construction.b
  }

  # Width: from round 3 on, a full θ level (11 counters for each of the 25w
  # bits). With two rounds the widest level is the first θ, whose sums read
  # only the message bits (each message bit is an operand of 11 sums); with
  # one round, the only θ sums computed are the five lanes t[x][x] that χ
  # reads for the 256 output bits: 64·35 counters plus 2 for each message
  # bit of the partly filled lane 16 (docs/fusion.md).
  expect "fusion" {
    depth = 2 * matrix.rounds + 1
    width = matrix.rounds >= 3 ? 11 * construction.b : (matrix.rounds == 2 ? 11 * construction.message_bits : 64 * 35 + 2 * (construction.message_bits - 1024))
  }
}

pipeline "compare-sha3-256" {
  # Full SHA3-256: one block, 24 rounds, verified against Go's crypto/sha3
  # on 256 random messages. Targets: fusion depth ≤ 50, width ≤ reifier's,
  # gates below reifier's.
  samples = 256

  matrix {
    objective = ["depth", "size"]
  }

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {}
  layerer "fusion" {
    objective = matrix.objective
  }

  expect "reifier" {
    depth = 2 + (2 + 6 * construction.rounds)
    width = 11 * construction.b
  }

  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * construction.rounds + 1 : 4 * construction.rounds
    width = 11 * construction.b
  }
}

pipeline "compare-sha256" {
  # SHA-256 (one block) at 8, 16 and 64 rounds, verified against Go's
  # crypto/sha256 (64 rounds) or sha2ref. Modular additions are SUMBIT
  # nodes cut into c = 2 chunks of 16 bits (max_weight 2^22): a round is
  # one level of Σ/Ch/Maj gates and c levels of chunk sums in fusion,
  # twice that in reifier (counters, then their alternating sum).
  # Targets: fusion depth ≤ 200 (NIST's Boolean circuit: 5,403).
  matrix {
    rounds = [8, 16, 64]
  }

  construction "sha2" {
    preset = "sha256"
    rounds = matrix.rounds
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 2 * (1 + construction.w / 16) * construction.rounds + 4
  }
  expect "fusion" {
    depth = (1 + construction.w / 16) * construction.rounds + 1
  }
}

pipeline "compare-md" {
  # Merkle–Damgård chains whose chain values fill half the state
  # (block = chain = ⌊25w/2⌋ bits), three and four rounds.
  matrix {
    log_w  = [1, 2, 3]
    rounds = [3, 4]
    blocks = [1, 2, 3, 4]
  }

  construction "md" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    block_bits = floor(25 * pow(2, matrix.log_w) / 2)
    chain_bits = floor(25 * pow(2, matrix.log_w) / 2)
    blocks     = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 1 + matrix.blocks * (3 + 6 * matrix.rounds - construction.zero_rc_rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * floor(25 * pow(2, matrix.log_w) / 2)
  }

  # The zero chain folds away, h ⊕ block folds into the last χ of the
  # previous compression (one switch point more), state building is
  # free: 2 levels a round, 1 output level.
  expect "fusion" {
    depth = 2 * matrix.rounds * matrix.blocks + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * floor(25 * pow(2, matrix.log_w) / 2)
  }
}

pipeline "compare-merkle" {
  # Merkle trees over half-state blocks (⌊25w/2⌋ bits), three and four
  # rounds.
  matrix {
    log_w  = [1, 2, 3]
    rounds = [3, 4]
    leaves = [1, 2, 4, 8]
  }

  construction "merkle" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    block_bits = floor(25 * pow(2, matrix.log_w) / 2)
    leaves     = matrix.leaves
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = log2(matrix.leaves) * (3 + 6 * matrix.rounds - construction.zero_rc_rounds) + 2 + 6 * matrix.rounds - construction.zero_rc_rounds
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }

  # left ⊕ right folds into the parent's first θ (22 operands a sum
  # instead of 11, over half as many nodes): no level for the xor.
  expect "fusion" {
    depth = 2 * matrix.rounds * (log2(matrix.leaves) + 1) + 1
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}

pipeline "compare-md-paper" {
  # The paper's Merkle–Damgård points (md_sequential.csv).
  matrix {
    log_w      = [1, 2]
    rounds     = [1, 2]
    block_bits = [4, 8]
    blocks     = [1, 2, 3, 4]
  }

  construction "md" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    rate       = matrix.block_bits + 8
    block_bits = matrix.block_bits
    chain_bits = matrix.block_bits
    blocks     = matrix.blocks
    padding    = "zero"
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = 1 + matrix.blocks * (3 + 6 * matrix.rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * matrix.block_bits
  }
}

pipeline "compare-merkle-paper" {
  # The paper's Merkle tree points (merkle_tree.csv).
  matrix {
    log_w  = [1, 2]
    rounds = [1, 2]
    leaves = [1, 2, 4, 8]
  }

  construction "merkle" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    rate       = 12
    block_bits = 4
    leaves     = matrix.leaves
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = log2(matrix.leaves) * (3 + 6 * matrix.rounds) + 2 + 6 * matrix.rounds
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}
