package forward

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/sdk/bitvec"
)

// TestMaxBytes: a memory budget changes how many samples go through the
// model at once, never the result; a budget below one sample on one
// worker is refused before the pass, naming both figures.
func TestMaxBytes(t *testing.T) {
	for _, variant := range []int{0, 1, 2} {
		rng := rand.New(rand.NewPCG(5, uint64(variant)))
		m := modeltest.RandomModel(rng, variant)
		in := bitvec.Random(rng, 40, 4)
		p, err := Compile(m)
		if err != nil {
			t.Fatal(err)
		}
		free, err := p.Run(in, Options{KeepValues: true, Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		one := p.WorkerBytes(1, Options{})
		tests := []struct {
			budget         int64
			workers, lanes int
			refused        bool
		}{
			{0, 4, 10, false},
			{4 * p.WorkerBytes(10, Options{}), 4, 10, false},
			{4*p.WorkerBytes(10, Options{}) - 1, 4, 5, false},
			{2 * one, 2, 1, false},
			{one, 1, 1, false},
			{one - 1, 0, 0, true},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("variant%d/budget%d", variant, tt.budget), func(t *testing.T) {
				opt := Options{KeepValues: true, Workers: 4, MaxBytes: tt.budget}
				w, l, err := p.fit(len(in), opt)
				if tt.refused {
					var me *MemoryError
					if !errors.As(err, &me) || me.Need != one || me.Limit != tt.budget {
						t.Fatalf("fit: %v, want a *MemoryError of %d over %d", err, one, tt.budget)
					}
					if _, err := p.Run(in, opt); !errors.As(err, &me) {
						t.Errorf("Run: %v, want a *MemoryError", err)
					}
					return
				}
				if err != nil || w != tt.workers || l != tt.lanes {
					t.Fatalf("fit: %d workers, %d lanes, %v; want %d, %d", w, l, err, tt.workers, tt.lanes)
				}
				got, err := p.Run(in, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Outputs, free.Outputs) || !reflect.DeepEqual(got.Values, free.Values) {
					t.Error("a budgeted pass computed other values")
				}
			})
		}
	}
}

// TestRunContext: a pass whose context ends stops with the context's
// error; one whose context lives computes what Run does.
func TestRunContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	m := modeltest.RandomModel(rng, 1)
	in := bitvec.Random(rng, 64, 4)
	p, err := Compile(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.RunContext(ctx, in, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	want, _ := p.Run(in, Options{})
	got, err := p.RunContext(context.Background(), in, Options{})
	if err != nil || !reflect.DeepEqual(got.Outputs, want.Outputs) {
		t.Errorf("live context: %v", err)
	}
}
