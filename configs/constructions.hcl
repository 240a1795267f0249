# Merkle–Damgård chains and Merkle trees past the paper: strengthened
# padding, messages that are not whole blocks, any number of leaves, and
# full-size instances whose compression is Keccak-f[1600].
#
#   go run ./host/cmd/tcforge run --out out configs/constructions.hcl
#
# Laws (Reifier-style backend; z = rounds whose w-bit round constant is 0,
# derived in plugins/md and plugins/merkle, whose package docs explain them):
#
#   MD, L message bits, n_c compressions (⌈L/block_bits⌉ blocks, at least 1
#   with 0* padding; one more, the length block, when strengthened):
#     depth = 1 + n_c·(3 + 6·rounds − z) + 1
#     width = 11·25w + max(0, L − block_bits)
#
#   Merkle tree, n leaves (max(1, ⌈L/block_bits⌉) with 0* padding,
#   ⌊L/block_bits⌋ + 1 with 10*), split H(i, j) at ⌊(i+j)/2⌋:
#     depth = (2 + 6·rounds − z) + ⌈log₂ n⌉·(3 + 6·rounds − z)
#     width = n·11·25w

pipeline "md-strengthened" {
  # 0* then a block holding the message length (MSB first). Messages that
  # are not whole blocks, chain values shorter and longer than the blocks.
  matrix {
    log_w        = [1, 2]
    rounds       = [1, 2]
    block_bits   = [4, 8]
    chain_scale  = [1, 2]
    message_bits = [3, 8, 13]
  }
  matrix {
    # round index 12 + 2·2 − 13 = 3 … 15: one w-bit round constant is 0
    log_w        = [2]
    rounds       = [13]
    block_bits   = [8]
    chain_scale  = [1]
    message_bits = [20]
  }

  construction "md" {
    log_w        = matrix.log_w
    rounds       = matrix.rounds
    block_bits   = matrix.block_bits
    chain_bits   = matrix.block_bits * matrix.chain_scale
    message_bits = matrix.message_bits
    padding      = "strengthened"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 1 + (ceil(matrix.message_bits / matrix.block_bits) + 1) * (3 + 6 * matrix.rounds - construction.zero_rc_rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + max(0, matrix.message_bits - matrix.block_bits)
  }
}

pipeline "md-zero-padding" {
  # 0* fills the last block of a message that is not whole blocks; the
  # chain value half or twice the block size.
  matrix {
    log_w        = [1, 2]
    rounds       = [1, 2]
    block_bits   = [6]
    chain_bits   = [3, 12]
    message_bits = [5, 14, 23]
  }

  construction "md" {
    log_w        = matrix.log_w
    rounds       = matrix.rounds
    block_bits   = matrix.block_bits
    chain_bits   = matrix.chain_bits
    message_bits = matrix.message_bits
    padding      = "zero"
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = 1 + ceil(matrix.message_bits / matrix.block_bits) * (3 + 6 * matrix.rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + max(0, matrix.message_bits - matrix.block_bits)
  }
}

pipeline "merkle-any-leaves" {
  # Trees that are not full: 3 = ((1 2) 3), 5 = (((1 2) 3) (4 5)),
  # 6 = (((1 2) 3) ((4 5) 6)), 7 = (((1 2) (3 4)) ((5 6) 7)).
  matrix {
    log_w  = [1, 2]
    rounds = [1, 2]
    leaves = [3, 5, 6, 7]
  }
  matrix {
    # one zero round constant per f
    log_w  = [2]
    rounds = [13]
    leaves = [3, 6]
  }

  construction "merkle" {
    log_w      = matrix.log_w
    rounds     = matrix.rounds
    block_bits = 4
    leaves     = matrix.leaves
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = (2 + 6 * matrix.rounds - construction.zero_rc_rounds) + ceil(log2(matrix.leaves)) * (3 + 6 * matrix.rounds - construction.zero_rc_rounds)
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}

pipeline "merkle-padded" {
  # Messages that are not whole leaf blocks. 0*: max(1, ⌈L/b⌉) leaves;
  # 10*: ⌊L/b⌋ + 1 leaves (a full message gets one more leaf).
  matrix {
    log_w        = [1, 2]
    rounds       = [1, 2]
    padding      = ["zero", "10*"]
    message_bits = [5, 12, 22, 30]
  }

  construction "merkle" {
    log_w        = matrix.log_w
    rounds       = matrix.rounds
    block_bits   = 4
    digest_bits  = 6
    message_bits = matrix.message_bits
    padding      = matrix.padding
  }

  layerer "reifier" {}

  expect "reifier" {
    depth = (2 + 6 * matrix.rounds) + ceil(log2(matrix.padding == "zero" ? max(1, ceil(matrix.message_bits / 4)) : floor(matrix.message_bits / 4) + 1)) * (3 + 6 * matrix.rounds)
    width = (matrix.padding == "zero" ? max(1, ceil(matrix.message_bits / 4)) : floor(matrix.message_bits / 4) + 1) * 11 * 25 * pow(2, matrix.log_w)
  }
}

pipeline "md-keccak-f1600" {
  # Full size: an MD chain of 4 blocks of 1088 bits (the SHA3-256 rate),
  # 256-bit chain value, compression Keccak-f[1600] (w = 64, 24 rounds).
  samples = 64

  construction "md" {
    log_w      = 6
    rounds     = 24
    rate       = 1088
    block_bits = 1088
    chain_bits = 256
    blocks     = 4
  }

  layerer "reifier" {}

  # 1 + 4·(3 + 6·24) + 1 and 11·1600 + 3·1088
  expect "reifier" {
    depth = 1 + 4 * (3 + 6 * 24) + 1
    width = 11 * 1600 + 3 * 1088
  }
}

pipeline "merkle-keccak-f1600" {
  # Full size: a Merkle tree of 8 leaves of 1088 bits, 256-bit hashes,
  # compression Keccak-f[1600] (w = 64, 24 rounds).
  samples = 64

  construction "merkle" {
    log_w       = 6
    rounds      = 24
    rate        = 1088
    block_bits  = 1088
    digest_bits = 256
    leaves      = 8
  }

  layerer "reifier" {}

  # (2 + 6·24) + 3·(3 + 6·24) and 8·11·1600
  expect "reifier" {
    depth = (2 + 6 * 24) + 3 * (3 + 6 * 24)
    width = 8 * 11 * 1600
  }
}
