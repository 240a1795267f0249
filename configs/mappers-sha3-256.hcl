# Full SHA3-256 (one block of 135 bytes) over fusion, mapped to the
# no-attention transformer (both variants), verified by the float32 forward
# pass against the layered circuit. With --export DIR the models load in
# PyTorch (python/, README "Run a model in PyTorch").
#
#   go run ./host/cmd/tcforge run --export out/models configs/mappers-sha3-256.hcl
pipeline "mappers-sha3-256" {
  samples = 64

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }
  mapper "no-attention" { variant = "residual" }
}
