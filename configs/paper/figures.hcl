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
}

# Figure "Plot for Keccak width scaling": arbitrary-length inputs, where the
# unabsorbed message bits are carried along: width = 11·25w + p − r.
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
