# The instances of the learnability experiments (docs/learnability.md,
# issue 29): every model verified by the host's float32 pass and exported,
# then trained by `python3 -m tcforge_torch train` at its shape, from
# scratch and from the answer. scripts/learnability.sh runs everything.
#
#   go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   go run ./host/cmd/tcforge run --plugin-dir bin --out out/learnability --export out/learnability/models configs/learnability.hcl

# The control: the example adder, n = 8 (16 input bits, 9 output bits).
pipeline "learn-adder" {
  samples = 64

  construction "adder" {
    n = 8
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = 8
    assign = "interleave"
  }
}

# Toy Keccak, one block without padding (rate bits in, rate bits out),
# one token a slice: w = 1 (16 bits) and w = 2 (32 bits), 1–3 rounds.
pipeline "learn-keccak" {
  samples = 64

  matrix {
    log_w  = [0, 1]
    rounds = [1, 2, 3, 4]
  }

  construction "keccak" {
    log_w   = matrix.log_w
    rate    = 16 * pow(2, matrix.log_w)
    rounds  = matrix.rounds
    blocks  = 1
    padding = "none"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = pow(2, matrix.log_w)
    assign = "interleave"
  }
}

# SHA-256 reduced to 1 and 2 rounds (one padded block, 447 message bits in,
# 256 digest bits out). tokens-as-states refuses it (its float32 budget:
# Σ|w·x| of the additions' chunks), so the shape is the no-attention MLP's;
# additions in 8-bit chunks keep every pre-activation float32-exact.
pipeline "learn-sha256" {
  samples = 64

  matrix {
    rounds = [1, 2, 3, 4]
  }

  construction "sha2" {
    preset = "sha256"
    rounds = matrix.rounds
  }

  layerer "fusion" {
    max_weight = 65536
  }

  mapper "no-attention" { variant = "mlp" }
}

# Full SHA3-256 (one block of 135 bytes): the stock model of
# configs/transformers.hcl (64 tokens, d_model 120, 48 blocks, 24 heads,
# FFN 642), trained from the answer only.
pipeline "learn-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {}

  mapper "tokens-as-states" {
    tokens = 64
    assign = "interleave"
  }
}

# SHA-256 reduced to 1–4 rounds through the no-attention residual variant
# (pre-norm blocks, x ← x + FFN(RMSNorm(x)), an all-zero one-token
# attention sublayer, an anchor dimension): the shape a Llama-style student
# trains stably (issue 36); the mlp variant's un-normed, non-residual
# blocks vanish or blow up from PyTorch's default initialisation.
pipeline "learn-sha256-residual" {
  samples = 64

  matrix {
    rounds = [1, 2, 3, 4]
  }

  construction "sha2" {
    preset = "sha256"
    rounds = matrix.rounds
  }

  layerer "fusion" {
    max_weight = 65536
  }

  mapper "no-attention" { variant = "residual" }
}
