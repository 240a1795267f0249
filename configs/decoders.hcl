# Tokens as time: decoders (GPT-shaped stock PyTorch layers run with a
# causal mask, a byte vocabulary) that read a circuit's inputs as bytes and
# greedily write its working before its digest (docs/mappers.md,
# "decoder"). levels_per_step = k: each step computes k levels of the
# circuit in k layers and writes what later steps read of them, so the
# layers grow with k and the generated tokens fall. Every model is checked
# by the host's greedy generation in float32 and float64, every generated
# token against the circuit's own values on the point's inputs.
#
#   go run ./host/cmd/tcforge run --out out configs/decoders.hcl
#
# Full size (minutes): configs/decoders-full.hcl.

# SHA-256 at two rounds, one padded block in (mode "block": the caller
# pads a message of 0-55 bytes), the digest out.
pipeline "decoder-sha256" {
  samples = 64

  matrix {
    k = [1, 2, 4]
  }

  construction "sha2" {
    preset = "sha256"
    mode   = "block"
    rounds = 2
  }

  # The decoder's max_weight, 2^16 (sums in 8-bit chunks, a byte of a
  # word a token), is the reifier's default here.
  layerer "reifier" {}

  mapper "decoder" {
    levels_per_step = matrix.k
  }
}

# Toy Keccak, w = 2, three rounds.
pipeline "decoder-keccak" {
  samples = 64

  matrix {
    k = [1, 2, 3]
  }

  construction "keccak" {
    log_w  = 1
    rate   = 32
    rounds = 3
  }

  layerer "fusion" {}

  mapper "decoder" {
    levels_per_step = matrix.k
  }
}
