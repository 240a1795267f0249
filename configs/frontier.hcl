# The depth frontier of full SHA3-256 (one block: a message of 135 bytes
# with its padding), every backend and objective on the same circuit:
#
#   reifier, mode = "paper"     the paper's lowering               depth 148
#   reifier, mode = "current"   today's Reifier (compile_keccak)    depth 121
#   fusion,  objective = "size"  forms materialised as gates          depth 96
#   fusion,  objective = "depth" two threshold levels a round         depth 49
#   fusion,  objective = "round" one threshold level a round          depth 25
#   fusion,  objective = "round", max_width = 500000
#            the round objective's shallowest plan within the budget:
#            its last round exact one level later (no rule 10)    depth 26
#
# The report draws depth against width, gates and nonzeros (one plot,
# every point labelled) beside the table; docs/fusion.md ("The depth
# frontier") explains each point's cost. The round point is heavy: 1½ to
# 3½ minutes and 7 GB in the fusion plugin, 221 M nonzeros (its flattened
# circuit would have 66 G edges, so it is verified on its forms). The
# budget point realises one round plan too (the one without rule 10): the
# plan with rule 10 is ruled out before it is realised, by a lower bound of
# its width computed on the plan (817,784 > 500,000). jobs = 1: the two
# heavy points run one after the other (side by side they would need 14 GB
# in the one fusion plugin process, above --plugin-memory's 8 GiB).
#
#   go run ./host/cmd/tcforge run --out out configs/frontier.hcl
pipeline "frontier-sha3-256" {
  samples = 64
  jobs    = 1

  matrix {
    reifier   = ["paper"]
    objective = ["size"]
  }
  matrix {
    reifier   = ["current"]
    objective = ["depth"]
  }
  # (reifier runs again at these points; the plot draws each backend once)
  matrix {
    reifier   = ["current"]
    objective = ["round"]
  }
  matrix {
    reifier   = ["current"]
    objective = ["round"]
    max_width = [500000]
  }

  construction "keccak" {
    preset = "sha3-256"
  }

  layerer "reifier" {
    mode = matrix.reifier
  }
  layerer "fusion" {
    objective = matrix.objective
    max_width = matrix.max_width # null (no budget) where a matrix block does not set it
  }

  expect "reifier" {
    depth = matrix.reifier == "paper" ? 148 : 121
    width = 17600
  }
  # Depth first: two levels a round and an output level, as wide as a θ
  # level (11 counters a state bit); size first: four a round, as wide.
  # Round: one a round and an output level; its widest level is the last
  # round's (22 θ counters, h's switch points and [a ∧ h]'s for each
  # digest bit, rule 10), which has no closed form: 817,784 is measured
  # (docs/fusion.md, "Laws"). With max_width = 500000 that plan does not
  # fit; the next, without rule 10, takes one more level for the last
  # round and is as wide as a middle round: 286 gates a state bit.
  expect "fusion" {
    depth = matrix.max_width != null ? construction.rounds + 2 : (matrix.objective == "depth" ? 2 * construction.rounds + 1 : (matrix.objective == "size" ? 4 * construction.rounds : construction.rounds + 1))
    width = matrix.max_width != null ? 286 * construction.b : (matrix.objective == "round" ? 817784 : 11 * construction.b)
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
