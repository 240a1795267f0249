// Package merkle is the binary Merkle tree construction plugin, over a
// Keccak-p[25w, rounds] compression function as in the paper's Merkle tree
// experiment, generalised to any number of leaves and to padded messages.
//
// # Construction
//
// The message of L bits is padded and split into n leaf blocks of
// block_bits bits (padding "zero": 0* fills the last block, n =
// max(1, ⌈L/block_bits⌉), no padding at all when the message fills its
// leaves, as in the paper; padding "10*": a 1 and then 0*, n =
// ⌊L/block_bits⌋ + 1, so that messages of different lengths never pad
// alike). Hashes are digest_bits bits:
//
//	H(i, i) = f_leaves(block_i)  = first digest_bits bits of f(state(block_i))
//	H(i, j) = f_nodes(H(i, m) ⊕ H(m+1, j)),  m = ⌊(i+j)/2⌋
//	        = first digest_bits bits of f(state(H(i, m) ⊕ H(m+1, j)))
//
// and the root H(1, n) is the digest. state(x) loads x into the first state
// bits of an otherwise zero state. The optional rate only bounds block_bits
// and digest_bits.
//
// Odd nodes. The split gives the left subtree ⌈k/2⌉ of a node's k leaves,
// so every inner node has two children; when n is not a power of two some
// subtrees are shallower, and their hash is promoted unchanged (no extra
// compression, carried by copy gates) until it meets its sibling: 3 leaves
// hash as ((1 2) 3), 5 as (((1 2) 3) (4 5)), 6 as (((1 2) 3) ((4 5) 6)), 7
// as (((1 2) (3 4)) ((5 6) 7)). This is the paper's recurrence; note that it
// differs from pairing level by level and promoting the last node of an odd
// level, which would give (((1 2) (3 4)) 5) for 5 leaves.
//
// The reference computes the tree with the independent lane-arithmetic
// Keccak (sdk/keccak/keccakref); the circuit composes the shared
// permutation pieces of sdk/keccak.
//
// # Circuit and laws
//
// A leaf is the state-building level (keccak.Perm.Load) and f; a node is
// the xor of its children (2 levels), the state-building level and f; one
// output level. f has 6 levels a round, 5 in a round whose w-bit round
// constant is 0 (z such rounds). With h = ⌈log₂ n⌉ the height of the tree
// (height(1) = 0, height(k) = 1 + height(⌈k/2⌉)), the Reifier-style backend
// gives
//
//	depth = (2 + 6·rounds − z) + h·(3 + 6·rounds − z)
//	width = n·11·25w
//
// All n leaves hash in parallel, and their first θ counter level is the
// widest: later levels run at most ⌈n/2⌉ compressions (11·25w each) beside
// at most n carried hashes of at most 25w bits, and
// ⌈n/2⌉·275w + 25w·n ≤ 275w·n for n ≥ 2. Padding, digest_bits and an odd
// number of leaves leave both laws unchanged. For n a power of two and
// z = 0 they are the paper's depth = log₂(n)·(3 + 6·rounds) + 2 + 6·rounds
// and width = n·11·25w. configs/paper/merkle.hcl and
// configs/constructions.hcl check them per point.
package merkle
