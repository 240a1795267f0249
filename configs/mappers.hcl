# Transformer mappings of the paper's circuits (section "Mapping Circuits to
# Transformers"), built and verified: every model is run by the host's own
# float32 forward pass (sdk/model) on the point's random inputs and must
# match the layered circuit bit for bit; softmax models also report the
# smallest β at which the same weights are still exact. See docs/mappers.md.
#
#   go run ./host/cmd/tcforge run --out out configs/mappers.hcl
#   go run ./host/cmd/tcforge run --out out --export out/models configs/mappers.hcl
#
# The CSV has one row per point × layerer × mapper block, the model columns
# (mapper, arch, tokens, d_model, model_blocks, heads, ffn_hidden, params_nonzero,
# params_dense, min_margin, beta, beta_min, model_verified) after the
# layered-circuit ones.

# The paper's Keccak experiment (Table 1's points).
pipeline "mappers-keccak" {
  samples = 64

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
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = 2 + matrix.blocks * (2 + 6 * matrix.rounds)
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * 25 * pow(2, matrix.log_w - 1)
  }
}

# The paper's Merkle–Damgård experiment.
pipeline "mappers-md" {
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
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = 1 + matrix.blocks * (3 + 6 * matrix.rounds) + 1
    width = 11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * matrix.block_bits
  }
}

# The paper's Merkle-tree experiment.
pipeline "mappers-merkle" {
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
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = log2(matrix.leaves) * (3 + 6 * matrix.rounds) + 2 + 6 * matrix.rounds
    width = matrix.leaves * 11 * 25 * pow(2, matrix.log_w)
  }
}

# Full SHA3-256 (w = 64, 24 rounds, one block), checked against crypto/sha3.
# The tokens-as-gates models have ~0.5–0.7 million tokens; the forward pass
# touches only the circuit's edges.
pipeline "mappers-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {}
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
  mapper "tokens-as-gates" { attention = "hard" }
  mapper "tokens-as-gates" { attention = "softmax" }

  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds)
    width = 11 * construction.b + (construction.blocks - 1) * construction.rate
  }
}

# Full SHA-256 (64 rounds, one block), checked against crypto/sha256;
# the same pipelines as configs/sha2-mappers.hcl (which explains the
# bounds): float32-exact models with additions in 8-bit chunks, and the
# shallowest circuit (16-bit chunks, 193 blocks) through both mappers.
pipeline "mappers-sha256" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "reifier" {
    max_weight = 65536
  }
  layerer "fusion" {
    max_weight = 65536
  }

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }

  expect "reifier" {
    depth = construction.blocks * (2 * (1 + construction.w / 8) * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 8) * construction.rounds + 1)
  }
}

pipeline "mappers-sha256-default" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "tokens-as-gates" { attention = "hard" }

  expect "fusion" {
    depth = construction.blocks * ((1 + construction.w / 16) * construction.rounds + 1)
  }
}
