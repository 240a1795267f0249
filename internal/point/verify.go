package point

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Samples draws n random input vectors of width bits, reproducibly from seed.
func Samples(seed uint64, n, width int) []bitvec.Vec {
	return bitvec.Random(rand.New(rand.NewPCG(seed, 0x7463666f726765)), n, width)
}

// FirstMismatch compares output vectors of n bits and describes the first
// sample that differs (a *MismatchError without input or seed), or
// returns nil.
func FirstMismatch(what string, got, want []bitvec.Vec, n int) error {
	return mismatch(what, nil, got, want, n)
}

// Mismatch is FirstMismatch for outputs computed from inputs in of nIn
// bits: its error also gives the sample's input and how many samples are
// wrong.
func Mismatch(what string, in []bitvec.Vec, nIn int, got, want []bitvec.Vec, n int) error {
	err := mismatch(what, in, got, want, n)
	if me, ok := err.(*MismatchError); ok {
		me.Samples, me.InputBits = len(in), nIn
		if me.Sample < len(in) {
			me.Input = in[me.Sample]
		}
	}
	return err
}

// SeededMismatch is Mismatch for inputs drawn from seed (Samples): its
// error also gives the seed, so that the failure replays (sdktest.Replay).
func SeededMismatch(what string, seed uint64, in []bitvec.Vec, nIn int, got, want []bitvec.Vec, n int) error {
	err := Mismatch(what, in, nIn, got, want, n)
	if me, ok := err.(*MismatchError); ok {
		me.Seed, me.Seeded = seed, true
	}
	return err
}

func mismatch(what string, in, got, want []bitvec.Vec, n int) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d results for %d samples", what, len(got), len(want))
	}
	var first *MismatchError
	for s := range want {
		if len(want[s]) < (n+63)/64 {
			return fmt.Errorf("%s: sample %d: reference output has fewer than %d bits", what, s, n)
		}
		if len(got[s]) < (n+63)/64 {
			return fmt.Errorf("%s: sample %d: output has fewer than %d bits", what, s, n)
		}
		wrong, firstBit := 0, -1
		for i := 0; i < n; i++ {
			if got[s].Get(i) != want[s].Get(i) {
				if wrong == 0 {
					firstBit = i
				}
				wrong++
			}
		}
		if wrong == 0 {
			continue
		}
		if first == nil {
			first = &MismatchError{What: what, Sample: s, Bit: firstBit, WrongBits: wrong, OutputBits: n, Output: got[s], Want: want[s]}
		}
		first.WrongSamples++
	}
	if first == nil {
		return nil
	}
	return first
}

// MismatchError is a verification failure: the first sample whose output
// differs from what it should be, in full.
type MismatchError struct {
	What         string
	Sample, Bit  int // the first sample that differs, and its first wrong bit
	WrongBits    int // wrong bits of that sample's OutputBits
	OutputBits   int
	WrongSamples int // samples with a wrong bit
	Output, Want bitvec.Vec
	// Set by Mismatch: the sample's input and the number of samples;
	// by SeededMismatch also the seed they were drawn from
	// (Samples(Seed, Samples, InputBits)).
	Input     bitvec.Vec
	InputBits int
	Samples   int
	Seed      uint64
	Seeded    bool
}

// Error implements error: "WHAT: sample 3, output bit 0 is 0, want 1; 37
// of 256 output bits wrong, 1 of 64 samples wrong; input 0x…, output 0x…,
// want 0x… (bits packed most significant first); seed 0x…". Long vectors
// are cut after 64 bytes.
func (e *MismatchError) Error() string {
	var sb strings.Builder
	if e.What != "" {
		sb.WriteString(e.What + ": ")
	}
	fmt.Fprintf(&sb, "sample %d, output bit %d is %d, want %d; %d of %d output bits wrong",
		e.Sample, e.Bit, e.Output.Get(e.Bit), e.Want.Get(e.Bit), e.WrongBits, e.OutputBits)
	if e.Samples > 0 {
		fmt.Fprintf(&sb, ", %d of %d samples wrong", e.WrongSamples, e.Samples)
	}
	sb.WriteString("; ")
	if e.Input != nil {
		fmt.Fprintf(&sb, "input %s, ", Hex(e.Input, e.InputBits))
	}
	fmt.Fprintf(&sb, "output %s, want %s (bits packed most significant first)", Hex(e.Output, e.OutputBits), Hex(e.Want, e.OutputBits))
	if e.Seeded {
		fmt.Fprintf(&sb, "; seed %#x, %d samples (sdktest.Replay reproduces it)", e.Seed, e.Samples)
	}
	return sb.String()
}

// Hex writes the first n bits of v as hex, packed most significant bit
// first (bitvec.PackMSB: a digest as the standard writes it), cut after
// 64 bytes with the number of bits left.
func Hex(v bitvec.Vec, n int) string {
	if n == 0 {
		return "(0 bits)"
	}
	b := v.PackMSB(n)
	if len(b) > 64 {
		return fmt.Sprintf("0x%x…(%d bits in all)", b[:64], n)
	}
	return fmt.Sprintf("0x%x", b)
}

// verifyLogic checks the logic circuit against reference outputs and
// returns the circuit's outputs on in, which the layered circuits are then
// checked against.
func verifyLogic(c *circuit.Circuit, seed uint64, in, ref []bitvec.Vec) ([]bitvec.Vec, error) {
	got, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		return nil, err
	}
	return got, SeededMismatch("logic circuit vs construction reference", seed, in, len(c.Inputs), got, ref, len(c.Outputs))
}

// verifyLayered checks the layered circuit against the logic circuit c,
// whose outputs on in are want (from verifyLogic).
func verifyLayered(l *layered.Circuit, c *circuit.Circuit, seed uint64, in, want []bitvec.Vec) error {
	if l.NumInputs != len(c.Inputs) {
		return fmt.Errorf("layered circuit has %d inputs, logic circuit %d", l.NumInputs, len(c.Inputs))
	}
	if l.NumOutputs() != len(c.Outputs) {
		return fmt.Errorf("layered circuit's last level has %d gates, want the %d outputs", l.NumOutputs(), len(c.Outputs))
	}
	got, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
	if err != nil {
		return err
	}
	return SeededMismatch("layered circuit vs logic circuit", seed, in, l.NumInputs, got, want, len(c.Outputs))
}
