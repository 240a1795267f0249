# Bristol Fashion circuits imported, layered by both backends and verified
# against the netlist itself (sdk/bristol's evaluator, written apart from
# the circuit builder). See docs/bristol.md.
#
#   go run ./host/cmd/tcforge run --out out configs/bristol.hcl
#
# A relative `file` is relative to this file.

pipeline "bristol-hand" {
  # adder4.txt, written by hand: a 4-bit ripple-carry adder (one MAND a bit
  # for the carry's two ANDs) and x = y, inputs x and y (4 bits each, least
  # significant first), outputs x + y (5 bits) and x = y (1 bit).
  matrix {
    max_arity = [2, 16]
  }

  construction "bristol" {
    file      = "../plugins/bristol/testdata/adder4.txt"
    max_arity = matrix.max_arity
  }

  layerer "reifier" {}
  layerer "fusion" {}

  # Measured (and checked by go test ./host/cli): the carry chain is the
  # critical path; fusion realises each bit's carry and sum in one level.
  expect "reifier" {
    depth = 12
    width = 12
  }
  expect "fusion" {
    depth = 5
    width = 13
  }
}

pipeline "bristol-tcforge" {
  # keccak50-1round-2blocks.txt, written by tcforge:
  #   tcforge inspect --pipeline keccak-arbitrary-input --point log_w=1,rounds=1,blocks=2 \
  #     --bristol plugins/bristol/testdata/keccak50-1round-2blocks.txt configs/paper/keccak.hcl
  # Keccak-f[50], one round, two blocks of 25 bits (the paper's first table).
  matrix {
    max_arity = [2, 16]
  }

  construction "bristol" {
    file      = "../plugins/bristol/testdata/keccak50-1round-2blocks.txt"
    max_arity = matrix.max_arity
  }

  layerer "reifier" {}
  layerer "fusion" {}

  # Measured. The native circuit (configs/paper/keccak.hcl at this point)
  # has reifier depth 18, width 575 and fusion depth 5, width 319: merging
  # the binary XOR trees back into n-ary XORs (max_arity = 16) and the
  # export's INV + AND back into ANDNOT gives both backends the native depth
  # and width. Binary XORs (max_arity = 2) cost reifier depth (two levels a
  # binary XOR) and fusion width.
  expect "reifier" {
    depth = matrix.max_arity == 2 ? 30 : 18
    width = matrix.max_arity == 2 ? 475 : 575
  }
  expect "fusion" {
    depth = 5
    width = matrix.max_arity == 2 ? 1860 : 319
  }
}
