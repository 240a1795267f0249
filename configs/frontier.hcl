# The depth frontier of full SHA3-256 (one block: a message of 135 bytes
# with its padding), every backend and objective on the same circuit:
#
#   reifier, mode = "paper"     the paper's lowering               depth 148
#   reifier, mode = "current"   today's Reifier (compile_keccak)    depth 121
#   fusion,  objective = "size"  forms materialised as gates          depth 96
#   fusion,  objective = "depth" two threshold levels a round         depth 49
#   fusion,  objective = "round" one threshold level a round          depth 25
#
# The report draws depth against width, gates and nonzeros (one plot,
# every point labelled) beside the table; docs/fusion.md ("The depth
# frontier") explains each point's cost. The round point is heavy: 1½ to
# 3½ minutes and 7 GB in the fusion plugin, 221 M nonzeros (its flattened
# circuit would have 66 G edges, so it is verified on its forms).
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
  # (reifier runs again at this point; the plot draws each backend once)
  matrix {
    reifier   = ["current"]
    objective = ["round"]
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
  # Depth first: two levels a round and an output level; size first: four
  # a round; round: one a round and an output level.
  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * construction.rounds + 1 : (matrix.objective == "size" ? 4 * construction.rounds : construction.rounds + 1)
  }
}

# The round objective on a toy Keccak (w = 2, four rounds, one block),
# beside depth first, mapped to the no-attention transformer and to
# tokens-as-states (stock PyTorch encoder layers, one token a slice) and
# verified by the float32 forward pass: the model rows show the depth — the
# number of FFN blocks — going from 2·rounds + 1 to rounds + 1, and
# tokens-as-states' stock layers from 2·rounds to rounds (the last level
# is folded into its readout), at a width cost: the last round's level has
# thousands of gates a digest bit, and its switch points differ per slice
# (ι's constant), so its units are not shared across tokens
# (docs/mappers.md).
# (The no-attention "residual" variant maps it too but does not verify in
# float32, min margin 0.009: the round objective's mixed-radix weights and
# forms of thousands of gates exceed what its RMS-normalised stream keeps
# exact. docs/fusion.md, "The depth frontier".)
pipeline "frontier-toy-mapped" {
  samples = 64

  matrix {
    objective = ["depth", "round"]
  }

  construction "keccak" {
    log_w   = 1
    rate    = 25
    rounds  = 4
    padding = "none"
  }

  layerer "fusion" {
    objective = matrix.objective
  }

  mapper "no-attention" { variant = "mlp" }
  mapper "tokens-as-states" {
    tokens = 2
    assign = "interleave"
  }

  # Depth first: two levels a round; round: one (the last one's output
  # bits exact in one level), and one output level either way. Between the
  # first and the last round the round objective's levels hold 286 gates
  # a state bit: width = 286·25w.
  expect "fusion" {
    depth = matrix.objective == "depth" ? 2 * construction.rounds + 1 : construction.rounds + 1
  }
}
