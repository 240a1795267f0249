# The paper's Keccak tables, reproduced with the Reifier-style backend.
#
#   keccak_arbitrary_input.csv  ("Formula verification for arbitrary Keccak
#                                 input and output sizes", 12 rows)
#   keccak_depth_deviation.csv  ("Deviation from the linear prediction
#                                 6·rounds + 2", 4 rows)
#
#   go run ./host/cmd/tcforge run --out out configs/paper/keccak.hcl

pipeline "keccak-arbitrary-input" {
  # rate = 25·w/2; the input is the already padded message, blocks·rate bits.
  matrix {
    log_w  = [1, 2]
    rounds = [1, 2]
    blocks = [1, 2, 4]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = 25 * pow(2, matrix.log_w - 1)
    rounds  = matrix.rounds
    blocks  = matrix.blocks
    padding = "none"
  }

  layerer "reifier" {}

  # depth = 2 + n_b(2 + 6 n_rounds);  width = 11·25w + p − r, p the input
  # bits (here the padded message; padding constants a construction adds
  # are not inputs and do not count: configs/compare.hcl, compare-*-padded)
  expect "reifier" {
    depth = 2 + matrix.blocks * (2 + 6 * matrix.rounds)
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * 25 * pow(2, matrix.log_w - 1)
  }
}

pipeline "keccak-depth-deviation" {
  # One block loaded straight into the state (the paper's first experiment).
  # The ι level is omitted in rounds whose w-bit round constant is zero.
  matrix {
    log_w  = [2]
    rounds = [13, 19]
  }
  matrix {
    log_w  = [3]
    rounds = [15]
  }
  matrix {
    log_w  = [4]
    rounds = [24]
  }

  construction "keccak" {
    log_w       = matrix.log_w
    rounds      = matrix.rounds
    rate        = 17
    padding     = "none"
    first_block = "load"
  }

  layerer "reifier" {}

  # depth_obs = 6·rounds + 2 − (rounds whose round constant has zero low w bits)
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
