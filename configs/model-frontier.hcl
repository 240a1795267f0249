# The model frontier: which stock transformer shapes compute which hash in
# one forward pass. Every point is a model that tokens-as-states builds
# with its defaults (`mapper "tokens-as-states" {}`: one token a distinct
# position hint) out of fusion's circuit, verified in this run by the
# host's float32 pass bit for bit against the layered circuit (which is
# verified against the construction's reference: crypto/sha3,
# crypto/sha256). After each pipeline's tables `tcforge run` prints its
# models' shapes (tokens, d_model, blocks, heads, FFN width, parameters)
# beside GPT-2 small, GPT-2 XL, Llama-2-7B and Llama-2-13B, after the last
# pipeline all of them in one table (the frontier), and report.html plots
# blocks against FFN width, d_model and dense parameters
# (docs/mappers.md, "The model frontier").
#
#   go run ./host/cmd/tcforge run --out out configs/model-frontier.hcl
#
# With --export DIR every model loads into a stock nn.TransformerEncoder
# (strict=True; python/ TestStockSHA256 runs full SHA-256 so against
# hashlib.sha256).

# Full SHA3-256, one block (135-byte messages): 64 tokens, 48 blocks
# (fusion depth first).
pipeline "frontier-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

# Full SHA3-256 below 48 blocks: fusion's round objective keeps its
# modular forms on levels 1..k (round_levels = k): the first k rounds take
# one level, the rest two, depth 49 − k, 48 − k stock blocks (47, 45, 42,
# 36). From k = 2 on the levels 2..k are the round objective's middle
# levels (457,600 gates, 7,150 a slice), which set the FFN width. One
# point at a time (jobs = 1): a wide point holds its circuit in the
# fusion, host and mapper processes.
pipeline "frontier-sha3-256-fewer" {
  samples = 64
  jobs    = 1

  matrix {
    round_levels = [1, 3, 6, 12]
  }

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {
    objective    = "round"
    round_levels = matrix.round_levels
  }

  mapper "tokens-as-states" {}

  expect "fusion" {
    depth = 49 - matrix.round_levels
  }
}

# Full SHA3-256 at one level a round: the round objective under a width
# budget of 500,000 gates (its last round exact one level later, no rule
# 10; configs/frontier.hcl): depth 26, 25 stock blocks, 22 levels of
# 457,600 gates.
pipeline "frontier-sha3-256-25" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {
    objective = "round"
    max_width = 500000
  }

  mapper "tokens-as-states" {}

  expect "fusion" {
    depth = 26
    width = 457600
  }
}

# Full SHA-256, one block (55-byte messages), 32 tokens: fusion's 8-bit
# chunks (depth 321, 320 blocks). The fusion block leaves max_weight
# unset, so it is 2^16, the bound tokens-as-states declares
# (sdk.Mapper.MaxWeight; the run's log says so): at fusion's own default
# (16-bit chunks, depth 193) a gate's Σ|w·x| + |θ| reaches 1,370,036 and
# the mapper would refuse, not exact in float32 (docs/mappers.md).
pipeline "frontier-sha256" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

# SHA-224 (one block) and SHA-256 of two blocks (119-byte messages), 8-bit
# chunks.
pipeline "frontier-sha2-more" {
  samples = 64

  matrix {
    preset = ["sha224", "sha256"]
  }

  construction "sha2" {
    preset = matrix.preset
    blocks = matrix.preset == "sha256" ? 2 : 1
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

# BLAKE2s-256 and BLAKE3 (one 64-byte block, 32 tokens: the words' bit
# positions) at full rounds, fusion's 8-bit chunks from the mapper's bound
# as for SHA-256 (depth 28r + 1: 281 and 197; 280 and 196 blocks), and
# Ascon-Hash256 (7-byte messages, 64 tokens: the bit slices of its 64-bit
# words; no additions, so the bound changes nothing: depth 96, 95 blocks,
# a deep, thin point). Each is verified in float32 against the layered
# circuit, itself against x/crypto's BLAKE2s, blake3ref and asconref.
pipeline "frontier-blake2s" {
  samples = 64

  construction "blake2s" {}

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

pipeline "frontier-blake3" {
  samples = 64

  construction "blake3" {}

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

pipeline "frontier-ascon" {
  samples = 64

  construction "ascon" {}

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

# The paper's Merkle–Damgård and Merkle points (w = 2, two rounds), two
# and four blocks or leaves: one token a slice.
pipeline "frontier-md" {
  samples = 64

  matrix {
    blocks = [2, 4]
  }

  construction "md" {
    log_w      = 1
    rounds     = 2
    rate       = 16
    block_bits = 8
    chain_bits = 8
    blocks     = matrix.blocks
    padding    = "zero"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}

pipeline "frontier-merkle" {
  samples = 64

  matrix {
    leaves = [2, 4]
  }

  construction "merkle" {
    log_w      = 1
    rounds     = 2
    rate       = 12
    block_bits = 4
    leaves     = matrix.leaves
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {}
}
