# Transformers of ordinary shape: the tokens-as-states mapper (stock PyTorch
# nn.TransformerEncoderLayer blocks; docs/mappers.md) beside the other
# mappings, every model verified by the host's float32 pass on the point's
# random inputs, bit for bit against the layered circuit. With --export DIR
# the tokens-as-states models load into a stock nn.TransformerEncoder with
# strict=True (python/, README "SHA3-256 in stock PyTorch modules").
#
#   go run ./host/cmd/tcforge run --out out --export out/models configs/transformers.hcl
#
# The CSV and the printed table have the model columns (tokens, d_model,
# model_blocks, heads, ffn_hidden, params_dense, params_nonzero, min_margin).

# Toy Keccak, w = 1 … 16, two rounds: one token a slice (tokens = w, state
# bit i on token i mod w).
pipeline "transformers-keccak" {
  samples = 64

  matrix {
    log_w = [0, 1, 2, 3, 4]
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

# The paper's Merkle–Damgård and Merkle points (w = 2, two rounds).
pipeline "transformers-md" {
  samples = 64

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
  samples = 64

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

# Full SHA3-256, one block of 135 bytes, over fusion: the comparison table
# of docs/mappers.md.
pipeline "transformers-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = 64
    assign = "interleave"
  }
  mapper "no-attention" { variant = "residual" }
}
