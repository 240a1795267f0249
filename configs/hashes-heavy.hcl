# The points of configs/hashes.hcl that take minutes (TestHashesConfig
# runs this file too in the heavy tier, TCFORGE_HEAVY=1): BLAKE3 at full
# rounds over one whole chunk (1024 bytes, 16 compressions in a chain:
# reifier depth 5,410, fusion 2,672) and two chunks, and at one and two
# rounds across the chunk boundary and in trees of two to four chunks;
# BLAKE2s over 200 bytes. The laws are configs/hashes.hcl's. Measured:
# 10 min 35 s at load 12–17 (79 s user + 74 s sys) with jobs 2 and one
# more point, 5.1 GB peak; now one point at a time.
#
#   go run ./host/cmd/tcforge run --out out configs/hashes-heavy.hcl

pipeline "blake3-chunks" {
  # One point at a time: full BLAKE3 over two chunks is 28.6 M reifier
  # gates; two such points at once took the host to 5.1 GB.
  jobs = 1

  matrix {
    rounds = [7]
    blocks = [16, 17]
  }
  matrix {
    rounds = [1]
    blocks = [16, 17, 33, 49]
  }
  matrix {
    rounds = [2]
    blocks = [16, 17, 33]
  }

  construction "blake3" {
    rounds = matrix.rounds
    blocks = matrix.blocks
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = (min(construction.blocks, 16) + ceil(log2(construction.chunks))) * (48 * construction.rounds + 2) + 2
  }
  expect "fusion" {
    depth = min(construction.blocks, 16) * (24 * construction.rounds - 1) + ceil(log2(construction.chunks)) * (24 * construction.rounds - 2)
  }
}

pipeline "blake2s-200-bytes" {
  construction "blake2s" {
    message_bits = 1600
  }

  layerer "reifier" {}
  layerer "fusion" {}

  expect "reifier" {
    depth = construction.blocks * (48 * 10 + 2) + 2
  }
  expect "fusion" {
    depth = construction.blocks * (24 * 10 - 1)
  }
}
