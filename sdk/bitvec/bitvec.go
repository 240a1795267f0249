// Package bitvec holds packed bit vectors and the transposition between
// per-sample vectors and bit-sliced words (64 samples per word) used by the
// evaluators.
package bitvec

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Vec is a packed bit vector: bit i is bit i%64 of word i/64.
type Vec []uint64

// NewVec returns a zero vector of n bits.
func NewVec(n int) Vec { return make(Vec, (n+63)/64) }

// Get returns bit i.
func (v Vec) Get(i int) uint { return uint(v[i/64]>>(uint(i)%64)) & 1 }

// Set sets bit i to b (0 or 1).
func (v Vec) Set(i int, b uint) {
	if b&1 == 1 {
		v[i/64] |= 1 << (uint(i) % 64)
	} else {
		v[i/64] &^= 1 << (uint(i) % 64)
	}
}

// FromBytes packs a one-byte-per-bit slice (0 or 1) into a Vec.
func FromBytes(b []byte) Vec {
	v := NewVec(len(b))
	for i, x := range b {
		v.Set(i, uint(x))
	}
	return v
}

// Bytes unpacks the first n bits into one byte per bit.
func (v Vec) Bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(v.Get(i))
	}
	return out
}

// Random returns m random vectors of n bits each.
func Random(rng *rand.Rand, m, n int) []Vec {
	out := make([]Vec, m)
	for s := range out {
		out[s] = NewVec(n)
		for w := range out[s] {
			out[s][w] = rng.Uint64()
		}
		if r := n % 64; r != 0 {
			out[s][len(out[s])-1] &= (1 << uint(r)) - 1
		}
	}
	return out
}

// Slice transposes up to 64 samples of n bits into n bit-sliced words:
// bit s of word i is bit i of samples[s].
func Slice(samples []Vec, n int) []uint64 {
	words := make([]uint64, n)
	for s, v := range samples {
		for i := 0; i < n; i++ {
			words[i] |= uint64(v.Get(i)) << uint(s)
		}
	}
	return words
}

// Unslice is the inverse of Slice for m samples.
func Unslice(words []uint64, m int) []Vec {
	n := len(words)
	out := make([]Vec, m)
	for s := range out {
		out[s] = NewVec(n)
		for i, w := range words {
			out[s].Set(i, uint(w>>uint(s))&1)
		}
	}
	return out
}

// Equal reports whether the first n bits of a and b agree.
func Equal(a, b Vec, n int) bool {
	for i := 0; i < n; i++ {
		if a.Get(i) != b.Get(i) {
			return false
		}
	}
	return true
}

// EvalSliced runs a 64-lane bit-sliced evaluator over any number of
// samples of width bits: it slices them 64 at a time, calls eval on each
// batch (concurrently, on up to GOMAXPROCS goroutines, so eval must be
// safe for concurrent use) and returns each sample's output vector.
func EvalSliced(in []Vec, width int, eval func([]uint64) ([]uint64, error)) ([]Vec, error) {
	nb := (len(in) + 63) / 64
	out := make([]Vec, len(in))
	errs := make([]error, nb)
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(nb, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for b := range next {
				lo, hi := b*64, min(b*64+64, len(in))
				words, err := eval(Slice(in[lo:hi], width))
				if err != nil {
					errs[b] = err
					continue
				}
				copy(out[lo:hi], Unslice(words, hi-lo))
			}
		})
	}
	for b := range nb {
		next <- b
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Parse reads a string of '0' and '1' (spaces, underscores and newlines
// are ignored, so "1100 0110" reads as 8 bits) into a Vec and its length;
// bit 0 is the first character.
func Parse(s string) (Vec, int, error) {
	v := NewVec(len(s))
	n := 0
	for i, c := range s {
		switch c {
		case '0', '1':
			v.Set(n, uint(c-'0'))
			n++
		case ' ', '_', '\n', '\t':
		default:
			return nil, 0, fmt.Errorf("bits: character %q at offset %d is not 0 or 1", c, i)
		}
	}
	return v[:(n+63)/64], n, nil
}

// Text returns the first n bits as a string of '0' and '1', bit 0 first
// (the inverse of Parse).
func (v Vec) Text(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0' + byte(v.Get(i))
	}
	return string(b)
}
