# Every pipeline of configs/mappers.hcl and configs/transformers.hcl at test
# size: the same layerer and mapper blocks (TestExactIn checks they match
# the configs' word for word), smaller constructions (one matrix point;
# SHA3-256 with one round or w = 2 (two rounds for tokens-as-states),
# SHA-256 with one round of an 8-bit message or of its compression). TestExactIn exports every model and runs it in
# PyTorch in float64, float32, float16 and bfloat16.

pipeline "mappers-keccak" {
  matrix {
    log_w  = [1]
    rounds = [1]
    blocks = [1]
  }
  construction "keccak" {
    log_w   = matrix.log_w
    rate    = 25 * pow(2, matrix.log_w - 1)
    rounds  = matrix.rounds
    blocks  = matrix.blocks
    padding = "none"
  }
  layerer "reifier" {}
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}

pipeline "mappers-md" {
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
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}

pipeline "mappers-merkle" {
  construction "merkle" {
    log_w      = 1
    rounds     = 1
    rate       = 12
    block_bits = 4
    leaves     = 2
  }
  layerer "reifier" {}
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}

pipeline "mappers-sha3-256" {
  construction "keccak" {
    log_w   = 1
    rate    = 32
    rounds  = 1
    padding = "sha3"
  }
  layerer "reifier" {}
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }
}

pipeline "mappers-sha256" {
  construction "sha2" {
    preset       = "sha256"
    rounds       = 1
    message_bits = 8
  }
  layerer "reifier" {
    max_weight = 65536
  }
  layerer "fusion" {
    max_weight = 65536
  }
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
}

pipeline "mappers-sha256-default" {
  construction "sha2" {
    preset       = "sha256"
    rounds       = 1
    message_bits = 8
  }
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
  mapper "tokens-as-gates" { attention = "hard" }
}

pipeline "transformers-sha3-256" {
  construction "keccak" {
    preset = "sha3-256"
    # 2, not 1: at one round over fusion tokens-as-states' Map panics
    # (labels: index 1184 of 1080 inputs; on main 9b417c1 too).
    rounds = 2
  }
  layerer "fusion" {}
  layerer "reifier" {}
  mapper "tokens-as-states" {
    tokens = 64
    assign = "interleave"
  }
  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
}

pipeline "transformers-sha3-256-block" {
  construction "keccak" {
    preset       = "sha3-256"
    padding      = "none"
    message_bits = 1088
    rounds       = 2 # as transformers-sha3-256's
  }
  layerer "fusion" {}
  mapper "tokens-as-states" {
    tokens = 64
  }
}

pipeline "transformers-sha256-block" {
  construction "sha2" {
    preset = "sha256"
    mode   = "compress"
    rounds = 1
  }
  layerer "fusion" {
    max_weight = 65536
  }
  mapper "tokens-as-states" {}
}

pipeline "transformers-keccak" {
  matrix {
    log_w = [1]
  }
  construction "keccak" {
    log_w  = matrix.log_w
    rate   = 16 * pow(2, matrix.log_w)
    rounds = 2
  }
  layerer "reifier" {}
  layerer "fusion" {}
  mapper "tokens-as-states" {
    tokens = pow(2, matrix.log_w)
    assign = "interleave"
  }
  mapper "no-attention" { variant = "residual" }
}

pipeline "transformers-md" {
  construction "md" {
    log_w      = 1
    rounds     = 2
    rate       = 16
    block_bits = 8
    chain_bits = 8
    blocks     = 2
    padding    = "zero"
  }
  layerer "fusion" {}
  mapper "tokens-as-states" { tokens = 4 }
  mapper "no-attention" { variant = "residual" }
}

pipeline "transformers-merkle" {
  construction "merkle" {
    log_w      = 1
    rounds     = 2
    rate       = 12
    block_bits = 4
    leaves     = 2
  }
  layerer "fusion" {}
  mapper "tokens-as-states" { tokens = 4 }
  mapper "no-attention" { variant = "residual" }
}
