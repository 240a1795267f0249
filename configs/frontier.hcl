# The depth frontier of full SHA3-256 (one block: a message of 135 bytes
# with its padding), every backend and objective on the same circuit:
#
#   reifier, mode = "paper"     the paper's lowering               depth 148
#   reifier, mode = "current"   today's Reifier (compile_keccak)    depth 121
#   fusion,  objective = "size"  forms materialised as gates          depth 96
#   fusion,  objective = "depth" two threshold levels a round         depth 49
#
# The report draws depth against width, gates and nonzeros (one plot,
# every point labelled) beside the table; docs/fusion.md ("The depth
# frontier") explains each point's cost. fusion's objective "round" (one
# level a round, docs/fusion.md) is not on this plot yet: at full size its
# flattened circuit has billions of edges, and the verifier evaluates the
# flattened circuit (see the docs for what remains).
#
#   go run ./host/cmd/tcforge run --out out configs/frontier.hcl
pipeline "frontier-sha3-256" {
  samples = 64

  matrix {
    reifier   = ["paper"]
    objective = ["size"]
  }
  matrix {
    reifier   = ["current"]
    objective = ["depth"]
  }

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {
    objective = matrix.objective
  }

  expect "reifier" {
    depth = matrix.reifier == "paper" ? 148 : 121
    width = 17600
  }
  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * construction.rounds + 1 : 4 * construction.rounds
    width = 17600
  }
}
