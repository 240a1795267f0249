# The paper's figures, regenerated: circuit drawings of the small circuits it
# shows and the depth/width scaling plots.
#
#   go run ./host/cmd/tcforge run --draw='fig-*-circuit' --out figures configs/paper/figures.hcl
#
# writes, besides each pipeline's CSV/JSON/Markdown:
#   figures/circuits/*.svg   one drawing per point of the fig-*-circuit pipelines
#                            (levels as rows, coloured by provenance; --draw
#                            draws circuits of at most --draw-max-gates gates)
#   figures/plots/*.svg|png  actual vs expected depth and width against each
#                            swept variable
#   figures/report.html      everything on one page
#
# One circuit's per-level table (level, width, kinds, provenance):
#   go run ./host/cmd/tcforge inspect --pipeline fig-keccak-circuit \
#     --point log_w=0 --svg keccak.svg configs/paper/figures.hcl

# Figure "Circuit compiled for Keccak function with w=1 and n_rounds=1": a
# 17-bit input loaded into the state, one round. The paper writes w for
# log w elsewhere (its MD and Merkle "w=1" circuits have 50-bit states), so
# both readings are drawn:
#   log_w = 0 (w = 1, b = 25):  state 25, θ 275 counters + 25, χ 50, 50, 25,
#                               output 17 — no ι level: the round constant's
#                               low bit is 0 (depth 7);
#   log_w = 1 (w = 2, b = 50):  state 50, θ 550 + 50, χ 100, 100, 50, ι 50,
#                               output 17 — the layer-by-layer description of
#                               the paper's appendix (depth 8).
pipeline "fig-keccak-circuit" {
  matrix {
    log_w = [0, 1]
  }

  construction "keccak" {
    log_w       = matrix.log_w
    rounds      = 1
    rate        = 17
    padding     = "none"
    first_block = "load"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 6 * 1 + 2 - construction.zero_rc_rounds
    width = 11 * 25 * pow(2, matrix.log_w)
  }
}

# Figure "Plot for Keccak depth scaling": one block loaded into the state,
# rounds 1..24. The ι level is omitted in rounds whose round constant has
# zero low w bits, so the depth falls below the linear 6·rounds + 2 by
# construction.zero_rc_rounds (the paper's deviations: log_w = 2 at 13 and
# 19 rounds).
pipeline "fig-keccak-depth" {
  samples = 64

  matrix {
    log_w  = [2, 3]
    rounds = range(1, 25)
  }

  construction "keccak" {
    log_w       = matrix.log_w
    rounds      = matrix.rounds
    rate        = 17
    padding     = "none"
    first_block = "load"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 6 * matrix.rounds + 2 - construction.zero_rc_rounds
    width = 11 * 25 * pow(2, matrix.log_w)
  }

  # The paper's linear prediction, which zero round constants undercut:
  # shown (and ringed in the plots) where it misses, never a failure.
  predict "reifier" {
    depth = 6 * matrix.rounds + 2
  }
}

# Figure "Plot for Keccak width scaling": arbitrary-length inputs, where the
# unabsorbed message bits are carried along: width = 11·25w + p − r, p the
# input bits (the padded message here; padding constants do not count).
pipeline "fig-keccak-width" {
  samples = 64

  matrix {
    log_w  = [1, 2, 3]
    blocks = [1, 2, 3, 4]
    rounds = [1]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = 25 * pow(2, matrix.log_w - 1)
    rounds  = matrix.rounds
    blocks  = matrix.blocks
    padding = "none"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 2 + matrix.blocks * (2 + 6 * matrix.rounds) - matrix.blocks * construction.zero_rc_rounds
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * 25 * pow(2, matrix.log_w - 1)
  }
}

# Figure "Circuit compiled for MD with compression function Keccak with w=1
# and n_rounds=1": an 8-bit message in 2 blocks of 4 bits, 4-bit chain,
# log w = 1, r = 12. Per block: xor into the chain (2 levels), state (1),
# f (6); plus the zero chain value and the output: depth 1 + 2·9 + 1 = 20.
pipeline "fig-md-circuit" {
  construction "md" {
    log_w      = 1
    rounds     = 1
    rate       = 12
    block_bits = 4
    chain_bits = 4
    blocks     = 2
    padding    = "zero"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 1 + 2 * (3 + 6 * 1) + 1
    width = 11 * 25 * 2 + (2 - 1) * 4
  }
}

# Figures "Plot for MD depth scaling" and "Plot for MD width scaling": the
# sweep of the paper's MD table (configs/paper/md.hcl).
pipeline "fig-md-scaling" {
  samples = 64

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

  expect "reifier" {
    depth = 1 + matrix.blocks * (3 + 6 * matrix.rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * matrix.block_bits
  }
}

# Figure "Circuit compiled for MT with compression function Keccak with w=1
# and n_rounds=1": 8 input bits, 2 leaves of 4 bits, log w = 1, r = 12.
# Input 8; leaves' states 2·50 = 100; f on both leaves (twice the width of
# f); xor of the leaf hashes (2 levels); the node's state and f; output:
# depth 17.
pipeline "fig-merkle-circuit" {
  construction "merkle" {
    log_w      = 1
    rounds     = 1
    rate       = 12
    block_bits = 4
    leaves     = 2
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = log2(2) * (3 + 6 * 1) + 2 + 6 * 1
    width = 2 * 11 * 25 * 2
  }
}

# Figures "Plot for MT depth scaling" and "Plot for MT width scaling": the
# sweep of the paper's Merkle tree table (configs/paper/merkle.hcl).
pipeline "fig-merkle-scaling" {
  samples = 64

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

  expect "reifier" {
    depth = log2(matrix.leaves) * (3 + 6 * matrix.rounds) + 2 + 6 * matrix.rounds
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}
