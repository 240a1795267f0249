# Full-size decoders (tokens as time; docs/mappers.md, "decoder"): SHA-256
# and SHA3-256 of one padded block, the caller padding the message (0-55
# and 0-135 bytes), with the mapper's defaults: a round of the circuit a
# step (SHA-256: 10 reifier levels, 10 layers), or fewer levels until the
# residual stream fits d_model 1,024 (SHA3-256: one level a step, one
# layer). Every model is checked by greedy generation on 64 random
# messages, every generated token against the circuit, in float32 and
# float64. Minutes and a few GB.
#
#   go run ./host/cmd/tcforge run --out out configs/decoders-full.hcl

pipeline "decoder-sha256-full" {
  samples = 64

  construction "sha2" {
    preset = "sha256"
    mode   = "block"
  }

  layerer "reifier" {}

  mapper "decoder" {}
}

pipeline "decoder-sha3-256-full" {
  samples = 64

  construction "keccak" {
    preset       = "sha3-256"
    padding      = "none"
    message_bits = 1088
  }

  layerer "fusion" {}

  mapper "decoder" {}
}
