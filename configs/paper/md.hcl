# The paper's Merkle–Damgård table, reproduced with the Reifier-style backend.
#
#   md_sequential.csv  ("Formula verification for the sequential
#                        Merkle–Damgård construction", 32 rows)
#
#   go run ./host/cmd/tcforge run --out out configs/paper/md.hcl

pipeline "md-sequential" {
  # Block bits = chain bits; rate 12 for 4-bit blocks, 16 for 8-bit blocks.
  # The message is blocks·block_bits bits, so 0* padding adds nothing.
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

  # depth_MD = 1 + depth_c·N_b + 1, depth_c = 2 + 1 + 6·n_rounds
  # width_MD = width_c + (N_b − 1)·N_size, width_c = 11·25w
  expect "reifier" {
    depth = 1 + matrix.blocks * (3 + 6 * matrix.rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * matrix.block_bits
  }
}
