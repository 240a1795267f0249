# The paper's Merkle tree table, reproduced with the Reifier-style backend.
#
#   merkle_tree.csv  ("Formula verification for the Merkle tree
#                      construction", 16 rows)
#
#   go run ./host/cmd/tcforge run --out out configs/paper/merkle.hcl

pipeline "merkle-tree" {
  # Binary trees over a power-of-two number of 4-bit blocks, no padding;
  # leaf = f(state(block)), node = f(state(left ⊕ right)), r = 12.
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

  # depth = log2(n_leaves)·(3 + 6·n_rounds) + 2 + 6·n_rounds
  # width = n_leaves·11·25w
  expect "reifier" {
    depth = log2(matrix.leaves) * (3 + 6 * matrix.rounds) + 2 + 6 * matrix.rounds
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}
