# The points of configs/hashes.hcl that take minutes (TestHashesConfig
# runs this file too in the heavy tier, TCFORGE_HEAVY=1): BLAKE3 at full
# rounds over one whole chunk (1024 bytes, 16 compressions in a chain) and
# two chunks, and at one and two rounds across the chunk boundary and in
# trees of two to four chunks; BLAKE2s over 200 bytes. The laws are
# configs/hashes.hcl's.
#
#   go run ./host/cmd/tcforge run --out out configs/hashes-heavy.hcl

pipeline "blake3-chunks" {
  matrix {
    rounds = [7]
    blocks = [16, 17]
  }
  matrix {
    rounds = [1, 2]
    blocks = [16, 17, 33, 49]
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
