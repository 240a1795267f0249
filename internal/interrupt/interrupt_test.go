package interrupt

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDo: Do returns f's result, or ctx's error as soon as ctx ends while
// f still runs; f never starts on an ended context.
func TestDo(t *testing.T) {
	v, err := Do(context.Background(), func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("Do: %d, %v", v, err)
	}
	boom := errors.New("boom")
	if _, err := Do(context.Background(), func() (int, error) { return 0, boom }); err != boom {
		t.Errorf("Do: %v, want f's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	t0 := time.Now()
	_, err = Do(ctx, func() (int, error) { <-release; return 1, nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do on a cancelled context: %v", err)
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("Do waited %v for f", d)
	}
	started := false
	if _, err := Do(ctx, func() (int, error) { started = true; return 0, nil }); err == nil || started {
		t.Errorf("Do on an ended context: %v, f started %v", err, started)
	}
}
