// Package md is the Merkle–Damgård construction plugin: a chain whose
// compression function is a Keccak-p[25w, rounds] instance, as in the
// paper's Section 2 (Merkle's construction) and its MD experiments.
//
// # Construction
//
// The message of L bits is split into blocks of block_bits bits and padded
// (padding "zero": 0* fills the last block, the empty message making one
// zero block; padding "strengthened": 0*, then one more block holding L in
// binary, most significant bit first, so L < 2^block_bits). The chain value
// h, of chain_bits bits, starts at zero; for each block m
//
//	h ← first chain_bits bits of f(state(x)),  x = (h ‖ 0*) ⊕ (m ‖ 0*)
//
// over max(block_bits, chain_bits) bits, loaded into the first state bits
// (the rest of the 25w-bit state is zero). The digest is the last h. The
// optional rate only bounds block_bits and chain_bits (they enter the rate
// part of the state); the paper's tables set it, the circuit ignores it.
// The reference computes the chain with the independent lane-arithmetic
// Keccak (sdk/keccak/keccakref); the circuit composes the shared
// permutation pieces of sdk/keccak.
//
// # Circuit and laws
//
// Per compression: the xor into the chain bits (2 levels, even against the
// zero chain value of the first block, as in the paper), the
// state-building level (keccak.Perm.Load: copies, and constant registers
// for the zeros and for padding bits), then f (6 levels a round, 5 in a
// round whose w-bit round constant is 0); one output level. The zero chain
// value takes the first level. With n_c compressions (blocks, plus the
// length block when strengthened) and z rounds of f with a zero constant,
// the Reifier-style backend gives
//
//	depth = 1 + n_c·(3 + 6·rounds − z) + 1
//	width = 11·25w + max(0, L − block_bits)
//
// The widest level is the first θ counter level: 11·25w counters while the
// message bits not yet absorbed are carried. Padding and the length block
// are constants, built where they are used, so strengthening adds one
// compression of depth and no width; chain_bits ≠ block_bits changes
// neither law. With L = blocks·block_bits and z = 0 these are the paper's
// depth = 1 + blocks·(3 + 6·rounds) + 1 and
// width = 11·25w + (blocks − 1)·block_bits.
// configs/paper/md.hcl and configs/constructions.hcl check them per point.
package md
