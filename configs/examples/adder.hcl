# The example external plugin: an n-bit ripple-carry adder.
#
#   go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
#   go run ./host/cmd/tcforge run --plugin-dir bin configs/examples/adder.hcl

pipeline "adder" {
  matrix {
    n = [1, 2, 4, 8, 16]
  }

  construction "adder" {
    n = matrix.n
  }

  layerer "reifier" {}

  # The carry chain is one threshold gate a bit; the sum bits' XORs are two
  # levels (counters, then their alternating sum), and outputs get copies.
  expect "reifier" {
    depth = max(3, matrix.n + 2)
    width = 2 * matrix.n + 1
  }
}
