# Valid pipelines for config tests.

pipeline "keccak-arbitrary-input" {
  samples = 16

  matrix {
    log_w  = [1, 2]
    blocks = [1, 2, 4]
    rounds = [1, 2]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = 25 * pow(2, matrix.log_w - 1)
    rounds  = matrix.rounds
    blocks  = matrix.blocks
    padding = "none"
  }

  layerer "reifier" {}
  layerer "fusion" {
    threshold = 0.5
    fuse      = true
  }
  mapper "no-attention" {}

  expect "reifier" {
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * 25 * pow(2, matrix.log_w - 1)
    depth = 2 + matrix.blocks * (2 + 6 * matrix.rounds)
  }
}

pipeline "union" {
  matrix {
    preset       = ["sha3-256"]
    message_bits = [2000, 4000]
  }
  matrix {
    preset      = "shake128"
    output_bits = [3000, 6000]
  }

  construction "keccak" {
    preset       = matrix.preset
    message_bits = matrix.message_bits
    output_bits  = matrix.output_bits
  }

  layerer "reifier" {}

  expect "reifier" {
    depth    = 2 + construction.blocks * (2 + 6 * construction.rounds)
    squeezes = ceil(construction.output_bits / construction.rate) - 1
    log_b    = log2(construction.b / 25)
    big      = max(construction.blocks, 3, log2(8)) + floor(7 / 2)
    named    = matrix.message_bits == null ? 0 : matrix.message_bits
  }
}

pipeline "single" {
  jobs = 1
  construction "keccak" {}
  layerer "reifier" {}
}
