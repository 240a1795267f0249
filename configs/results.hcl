# The figures of the README's headline table and of docs/results.md that
# take seconds (configs/results-heavy.hcl has those that take minutes).
# `go test ./docs` runs this file in process and checks every figure of
# those tables against it (`go test ./docs -update` rewrites the tables).
#
#   go run ./host/cmd/tcforge run --out out configs/results.hcl

# Full SHA3-256 (one block, 135-byte messages) through every backend, and
# the smallest transformer of each: the no-attention MLP (one token, one
# SwiGLU FFN sublayer a level).
pipeline "results-sha3-256-reifier" {
  samples = 16
  matrix {
    mode = ["paper", "current"]
  }
  construction "keccak" {
    preset = "sha3-256"
  }
  layerer "reifier" {
    mode = matrix.mode
  }
  mapper "no-attention" { variant = "mlp" }
}

pipeline "results-sha3-256-fusion" {
  samples = 16
  matrix {
    objective = ["size", "depth"]
  }
  construction "keccak" {
    preset = "sha3-256"
  }
  layerer "fusion" {
    objective = matrix.objective
  }
  mapper "no-attention" { variant = "mlp" }
  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * 24 + 1 : 4 * 24
  }
}

# SHA-2, one block of the longest message that pads to one block, both
# backends (configs/sha2.hcl has every variant and the laws).
pipeline "results-sha2" {
  samples = 16
  matrix {
    preset = ["sha256", "sha512"]
  }
  construction "sha2" {
    preset = matrix.preset
  }
  layerer "reifier" {}
  layerer "fusion" {}
}

# BLAKE2s-256, BLAKE3 and Ascon-Hash256 at full size, one block each (a
# 64-byte message for BLAKE2s and BLAKE3, 7 bytes for Ascon-Hash256), both
# backends (configs/hashes.hcl has more points and the laws).
pipeline "results-blake2s" {
  samples = 16
  construction "blake2s" {}
  layerer "reifier" {}
  layerer "fusion" {}
}

pipeline "results-blake3" {
  samples = 16
  construction "blake3" {}
  layerer "reifier" {}
  layerer "fusion" {}
}

pipeline "results-ascon" {
  samples = 16
  construction "ascon" {}
  layerer "reifier" {}
  layerer "fusion" {}
}
