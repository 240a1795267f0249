# The out-of-tree parity construction through both layerers and the MLP
# mapper: go run ./host/cmd/tcforge run --plugin-dir DIR docs/testdata/outside/parity.hcl
pipeline "parity" {
  matrix {
    n = [2, 5, 16]
  }

  construction "parity" {
    n = matrix.n
  }

  layerer "reifier" {}
  layerer "fusion" {}

  mapper "no-attention" { variant = "mlp" }

  # reifier: the XOR's n counters and the AND, then the counters'
  # alternating sum, then the outputs' copies; fusion: two levels.
  expect "reifier" {
    depth = 3
    width = matrix.n + 1
  }
  expect "fusion" { depth = 2 }
}
