# One full SHA3-256 point (w = 64, 24 rounds, one block), for timing a whole
# run: host start, plugin processes, RPC, verification on 256 messages.
#
#   go build -o bin/tcforge ./host/cmd/tcforge
#   /usr/bin/time bin/tcforge run configs/bench/sha3-256.hcl
#   /usr/bin/time bin/tcforge run --in-process configs/bench/sha3-256.hcl   # the same without RPC

pipeline "sha3-256" {
  construction "keccak" {
    preset = "sha3-256"
  }
  layerer "reifier" {}
}
