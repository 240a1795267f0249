# Transformers of ordinary shape: the tokens-as-states mapper (stock PyTorch
# nn.TransformerEncoderLayer blocks; docs/mappers.md) beside the other
# mappings, every model verified by the host's float32 pass on the point's
# random inputs, bit for bit against the layered circuit. After each
# pipeline's tables `tcforge run` prints the shape comparison (tokens,
# d_model, blocks, heads, FFN width, parameters dense and nonzero) beside
# GPT-2 small, GPT-2 XL and Llama-2-7B; report.html shows it too. With
# --export DIR the tokens-as-states models load into a stock
# nn.TransformerEncoder with strict=True (python/, docs/export.md "Stock
# PyTorch modules").
#
#   go run ./host/cmd/tcforge run --out out --export out/models configs/transformers.hcl
#
# The adder (an external plugin) is in configs/examples/adder-transformers.hcl.

# Full SHA3-256, one block of 135 bytes: the comparison table of
# docs/mappers.md. Every mapper that fits in memory (tokens-as-gates does
# not: 478,061 tokens).
pipeline "transformers-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
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

# SHA3-256 of one padded block (the caller pads, as a tokenizer would:
# any message of up to 135 bytes): the model of docs/export.md's snippet, which
# prints sha3_256(b"abc") from stock PyTorch modules.
pipeline "transformers-sha3-256-block" {
  samples = 64

  construction "keccak" {
    preset       = "sha3-256"
    padding      = "none"
    message_bits = 1088
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = 64
  }
}

# SHA-256's compression function (chaining value and one block in) over
# 8-bit chunks, as stock layers (32 tokens, one a bit position): with
# --export, its byte module feeds the IV and pads any message of 0 to 55
# bytes (docs/export.md), the README's SHA-256 lines.
pipeline "transformers-sha256-block" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
    mode   = "compress"
  }

  layerer "fusion" {
    max_weight = 65536
  }

  mapper "tokens-as-states" {}
}

# Toy Keccak, w = 1 … 16, two rounds: one token a slice.
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
