# The README's two models and nothing else: full SHA3-256 of one padded
# block and SHA-256's compression function as stock PyTorch layers, each
# verified by the host's float32 and float64 passes. With --export DIR
# their byte modules (.pt for torch.jit.load, .onnx for ONNX Runtime) are
# written beside them, the files the README's Python lines load:
#
#   go run ./host/cmd/tcforge run --export out/models configs/readme-models.hcl
#
# The pipelines are configs/transformers.hcl's of the same names, copied
# block for block (go test ./docs, TestReadmeModels, holds them equal), so
# the files are the ones that config writes; it also exports four more
# pipelines and their models (GBs), which the README does not need.

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
