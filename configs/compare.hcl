# Reifier-style backend vs the optimizing backend fusion, side by side
# (issue 4). Every pipeline names both layerers: each point yields one row
# per backend, and the terminal table shows fusion's depth, width, gates,
# edges and compile time as ratios to reifier's on the same circuit.
#
#   go run ./host/cmd/tcforge run --jobs 1 --out out configs/compare.hcl
#
# (--jobs 1 keeps the measured compile times free of other points' load.)
#
# The Keccak, MD and Merkle pipelines run reifier in both modes (matrix
# variable reifier): "paper", the form behind the paper's tables, and
# "current", today's Reifier release (compile_keccak; docs/design.md), so
# that fusion's ratios can be quoted against either.
#
# Laws (derived in docs/fusion.md and docs/design.md; z = rounds whose w-bit
# round constant is 0, which the paper's reifier skips and the others do not
# care about; m = message bits, the circuit's inputs — the padded input when
# padding = "none" — never the padding constants; n_m = ⌈m/r⌉ the blocks
# holding message bits):
#
#   reifier, the paper's:  Keccak  depth = 2 + n_b·(2 + 6·rounds − z)
#                                  width = 11·25w + max(0, m − r)
#   reifier, current:      Keccak  depth = 5·rounds·n_b + 2·(n_m − 1) + 1
#                                  width = 11·25w + max(0, m − r)
#                          MD      depth = (5·rounds + 2)·n_b − 1
#                                  width = 11·25w + (n_b − 1)·block_bits
#                          Merkle  depth = (5·rounds + 2)·log₂ n + 5·rounds + 1
#                                  width = n·11·25w
#   fusion, depth first:   Keccak  depth = 2·rounds·n_b + 1
#                                  width = 11·25w + max(0, m − r)    (rounds ≥ 3)
#                          MD      depth = 2·rounds·n_b + 1
#                                  width = 11·25w + (n_b − 1)·block_bits
#                          Merkle  depth = 2·rounds·(log₂ n + 1) + 1
#                                  width = n·11·25w
#   fusion, size first:    Keccak  depth = 4·rounds·n_b, width as above
#   fusion, round:         Keccak  depth = rounds·n_b + 1 (width: no closed form)
#     with max_width = 286·25w:    depth = rounds + 2, width = 286·25w
#     with max_width = 286·25w − 1: depth first          (one block, rounds ≥ 3)
#   SHA-256 (c = w/16 = 2 chunks a modular addition; docs/sha2.md):
#     reifier depth = n_b·(2(1 + c)·rounds + 2) + 2
#             width = 1952 + 32·⌊(rounds − 31)/2⌋        (one block, rounds ≥ 62)
#     fusion  depth = n_b·((1 + c)·rounds + 1)            (objective "depth")
#             depth = n_b·(2(1 + c)·rounds + 2) − (1 + c)  (objective "size")
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
    reifier   = ["paper", "current"]
    objective = ["depth", "size"]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = floor(25 * pow(2, matrix.log_w) / 2)
    blocks  = matrix.blocks
    padding = "none"
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {
    objective = matrix.objective
  }

  # Current: five levels a round, two for each absorb after the first
  # (the first block is xored into constants: a wire), one output row.
  expect "reifier" {
    depth = matrix.reifier == "paper" ? 2 + matrix.blocks * (2 + 6 * construction.rounds - construction.zero_rc_rounds) : matrix.blocks * (5 * construction.rounds + 2) - 1
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
    rounds  = [1, 2, 4, 8, 12, 24]
    reifier = ["paper", "current"]
  }

  construction "keccak" {
    preset = "sha3-256"
    rounds = matrix.rounds
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {}

  # Both modes keep every round's full θ level (gates and edges of the
  # current mode: configs/sha3.hcl).
  expect "reifier" {
    depth = matrix.reifier == "paper" ? 2 + (2 + 6 * matrix.rounds - construction.zero_rc_rounds) : 5 * matrix.rounds + 1
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

pipeline "compare-keccak-round" {
  # fusion's round objective, one threshold level a round (values only
  # parities read kept as integer forms known modulo 2, rule 9; the last
  # round's output bits exact in the same level, rule 10), on toy sponges
  # of one block. Its width has no closed form: the widest level is the
  # last round's, about 3,190 gates a digest bit, in classes set by how the
  # θ sums of χ's operands overlap (docs/fusion.md, "Laws"); only the
  # depth is a law here.
  matrix {
    log_w  = [0, 1, 2, 3]
    rounds = [3, 6]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = floor(25 * pow(2, matrix.log_w) / 2)
    rounds  = matrix.rounds
    padding = "none"
  }

  layerer "reifier" {
    mode = "current"
  }
  layerer "fusion" {
    objective = "round"
  }

  expect "reifier" {
    depth = 5 * construction.rounds + 1
    width = 11 * construction.b
  }
  expect "fusion" {
    depth = construction.rounds + 1
  }
}

pipeline "compare-keccak-budget" {
  # The round objective under a width budget (max_width): the shallowest
  # plan whose widest level fits. With max_width = 286·25w the round plan
  # (its last level about 3,190 gates a digest bit) does not fit; without
  # rule 10 the last round's output bits are exact one level later (depth
  # rounds + 2) and the widest levels are the middle rounds', 286 gates a
  # state bit (22 counters of a θ sum in [0, 22], 264 switch points of
  # [S_b even ∧ S_c odd]). One gate less and that does not fit either:
  # depth first, two levels a round, as wide as a θ level. rounds ≥ 3: a
  # middle round exists, and all its state bits are read.
  matrix {
    log_w  = [0, 1, 2, 3]
    rounds = [3, 4, 6]
    budget = ["middle", "tight"]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = floor(25 * pow(2, matrix.log_w) / 2)
    rounds  = matrix.rounds
    padding = "none"
  }

  layerer "reifier" {
    mode = "current"
  }
  layerer "fusion" {
    objective = "round"
    max_width = matrix.budget == "middle" ? 286 * 25 * pow(2, matrix.log_w) : 286 * 25 * pow(2, matrix.log_w) - 1
  }

  expect "reifier" {
    depth = 5 * construction.rounds + 1
    width = 11 * construction.b
  }
  expect "fusion" {
    depth = matrix.budget == "middle" ? construction.rounds + 2 : 2 * construction.rounds + 1
    width = matrix.budget == "middle" ? 286 * construction.b : 11 * construction.b
  }
}

pipeline "compare-sha3-256" {
  # Full SHA3-256: one block, 24 rounds, verified against Go's crypto/sha3
  # on 256 random messages. Targets: fusion depth ≤ 50, width ≤ reifier's,
  # gates below reifier's.
  samples = 256

  matrix {
    reifier   = ["paper", "current"]
    objective = ["depth", "size"]
  }

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {
    objective = matrix.objective
  }

  expect "reifier" {
    depth = matrix.reifier == "paper" ? 2 + (2 + 6 * construction.rounds) : 5 * construction.rounds + 1
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

pipeline "compare-sha256-laws" {
  # SHA-256 from 62 rounds, where reifier's width has its law (the level
  # where the last message-schedule words meet the rounds, no padding word
  # in flight there; docs/sha2.md), against both of fusion's objectives
  # that apply to SHA-2.
  matrix {
    rounds    = [62, 64]
    objective = ["depth", "size"]
  }

  construction "sha2" {
    preset = "sha256"
    rounds = matrix.rounds
  }

  layerer "reifier" {}
  layerer "fusion" {
    objective = matrix.objective
  }

  expect "reifier" {
    depth = 2 * (1 + construction.w / 16) * construction.rounds + 4
    width = 1952 + 32 * floor((construction.rounds - 31) / 2)
  }
  expect "fusion" {
    depth = matrix.objective == "depth" ? (1 + construction.w / 16) * construction.rounds + 1 : 2 * (1 + construction.w / 16) * construction.rounds + 2 - (1 + construction.w / 16)
  }
}

pipeline "compare-keccak-padded" {
  # Padded messages over several blocks (sha3 padding), toy instances: the
  # width law's p − r counts message bits, not the padding constants. The
  # last block may hold only padding; it then costs the current mode no
  # absorb levels (n_m, not n_b).
  matrix {
    log_w        = [2, 3, 4]
    rounds       = [3, 4]
    message_bits = [100, 333]
    reifier      = ["paper", "current"]
  }

  construction "keccak" {
    log_w        = matrix.log_w
    rounds       = matrix.rounds
    rate         = floor(25 * pow(2, matrix.log_w) / 2)
    message_bits = matrix.message_bits
    padding      = "sha3"
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {}

  expect "reifier" {
    depth = matrix.reifier == "paper" ? 2 + construction.blocks * (2 + 6 * construction.rounds - construction.zero_rc_rounds) : 5 * construction.rounds * construction.blocks + 2 * (ceil(construction.message_bits / construction.rate) - 1) + 1
    width = 11 * construction.b + max(0, construction.message_bits - construction.rate)
  }

  expect "fusion" {
    depth = 2 * construction.rounds * construction.blocks + 1
    width = 11 * construction.b + max(0, construction.message_bits - construction.rate)
  }
}

pipeline "compare-sha3-256-padded" {
  # Full SHA3-256 over two blocks: the longest whole-byte message, 2168
  # bits. Every backend is 18,680 wide (11·1600 + m − r); counting the
  # padded input would say 18,688.
  matrix {
    blocks  = [2]
    reifier = ["paper", "current"]
  }

  construction "keccak" {
    preset = "sha3-256"
    blocks = matrix.blocks
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {}

  expect "reifier" {
    depth = matrix.reifier == "paper" ? 2 + matrix.blocks * (2 + 6 * construction.rounds) : (5 * construction.rounds + 2) * matrix.blocks - 1
    width = 11 * construction.b + construction.message_bits - construction.rate
  }

  expect "fusion" {
    depth = 2 * construction.rounds * matrix.blocks + 1
    width = 11 * construction.b + construction.message_bits - construction.rate
  }
}

pipeline "compare-md" {
  # Merkle–Damgård chains whose chain values fill half the state
  # (block = chain = ⌊25w/2⌋ bits), three and four rounds.
  matrix {
    log_w   = [1, 2, 3]
    rounds  = [3, 4]
    blocks  = [1, 2, 3, 4]
    reifier = ["paper", "current"]
  }

  construction "md" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    block_bits = floor(25 * pow(2, matrix.log_w) / 2)
    chain_bits = floor(25 * pow(2, matrix.log_w) / 2)
    blocks     = matrix.blocks
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {}

  # Current: the zero chain, state building and the first block's xor are
  # wires; each further h ⊕ block is two levels.
  expect "reifier" {
    depth = matrix.reifier == "paper" ? 1 + matrix.blocks * (3 + 6 * matrix.rounds - construction.zero_rc_rounds) + 1 : (5 * matrix.rounds + 2) * matrix.blocks - 1
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
    log_w   = [1, 2, 3]
    rounds  = [3, 4]
    leaves  = [1, 2, 4, 8]
    reifier = ["paper", "current"]
  }

  construction "merkle" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    block_bits = floor(25 * pow(2, matrix.log_w) / 2)
    leaves     = matrix.leaves
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {}

  # Current: a leaf is f (5 levels a round), a node left ⊕ right (two
  # levels) then f; one output row.
  expect "reifier" {
    depth = matrix.reifier == "paper" ? log2(matrix.leaves) * (3 + 6 * matrix.rounds - construction.zero_rc_rounds) + 2 + 6 * matrix.rounds - construction.zero_rc_rounds : (5 * matrix.rounds + 2) * log2(matrix.leaves) + 5 * matrix.rounds + 1
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
