# testdata/shard-short.hcl without its mapper pipeline: what TestSlurmScripts
# and TestKubernetesJob run through the scripts and pods they write.

pipeline "compare-md-paper" {
  # The paper's Merkle–Damgård points (md_sequential.csv).
  matrix {
    log_w      = [1]
    rounds     = [1]
    block_bits = [4, 8]
    blocks     = [1, 2, 3]
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
    log_w  = [1]
    rounds = [1]
    leaves = [1, 2, 4]
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

