// Command tcforge-cotseq writes the chain-of-thought sequence file of a
// decoder (python/cotseq): it builds a construction, layers it, maps it
// with the decoder mapper at levels_per_step = -k, checks it and writes
// -count sequences (prompt, working, digest) of distinct random inputs.
//
//	go run ./python/cotseq/cmd/tcforge-cotseq -construction keccak \
//	    -set log_w=0 -set rate=16 -set rounds=1 -set blocks=1 -set padding=none \
//	    -layerer fusion -k 1 -count 20000 -o out/learnability/cot/keccak-w1-r1.k1.cot.json
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/python/cotseq"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
)

type sets map[string]any

func (s sets) String() string { return fmt.Sprint(map[string]any(s)) }

// Set parses key=value: an integer, true or false, or a string.
func (s sets) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", kv)
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		s[k] = n
	} else if b, err := strconv.ParseBool(v); err == nil {
		s[k] = b
	} else {
		s[k] = v
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tcforge-cotseq: ERROR:", err)
		os.Exit(1)
	}
}

func run() error {
	cset, lset := sets{}, sets{}
	construction := flag.String("construction", "", "construction plugin (keccak, sha2, adder, …)")
	flag.Var(cset, "set", "construction parameter key=value (repeat)")
	layerer := flag.String("layerer", "fusion", "layerer plugin")
	flag.Var(lset, "lset", "layerer parameter key=value (repeat); max_weight defaults to the decoder's")
	k := flag.Int("k", 1, "the decoder's levels_per_step (0: its choice)")
	count := flag.Int("count", 20000, "sequences (distinct random inputs)")
	seed := flag.Uint64("seed", 1, "input seed")
	verify := flag.Int("verify", 64, "sequences the decoder model itself generates, token for token, before writing")
	instance := flag.String("instance", "", "instance label in the file")
	out := flag.String("o", "", "output file (written whole: a temporary file renamed over it)")
	flag.Parse()
	if *construction == "" || *out == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("give -construction and -o (and no arguments)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plugins := builtin.Plugins()
	plugins[adder.Plugin.Name] = adder.Plugin // the example plugin, outside the binary
	cons, ok := plugins[*construction].(*sdk.Construction)
	if !ok {
		return fmt.Errorf("-construction %q: no such construction plugin", *construction)
	}
	lay, ok := plugins[*layerer].(*sdk.Layerer)
	if !ok {
		return fmt.Errorf("-layerer %q: no such layerer plugin", *layerer)
	}
	cpass, err := sdk.NewPass(ctx, cons, cset)
	if err != nil {
		return fmt.Errorf("construction %s: %w", cons.Name, err)
	}
	c, err := cons.Build(ctx, cpass)
	if err != nil {
		return fmt.Errorf("construction %s: %w", cons.Name, err)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("construction %s: %w", cons.Name, err)
	}
	if _, set := lset[sdk.MaxWeightParam]; !set {
		for _, p := range lay.Params {
			if p.Name == sdk.MaxWeightParam {
				lset[sdk.MaxWeightParam] = decoder.Plugin.MaxWeight
			}
		}
	}
	lpass, err := sdk.NewPass(ctx, lay, lset)
	if err != nil {
		return fmt.Errorf("layerer %s: %w", lay.Name, err)
	}
	l, err := lay.Layer(ctx, lpass, c)
	if err != nil {
		return fmt.Errorf("layerer %s: %w", lay.Name, err)
	}
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: *k})
	if err != nil {
		return err
	}
	ref := func(ctx context.Context, in []bitvec.Vec) ([]bitvec.Vec, error) {
		return cons.Reference(ctx, cpass, in)
	}
	src := fmt.Sprintf("tcforge-cotseq -construction %s %v -layerer %s %v -k %d (decoder: %d layers, d_model %d, %d working + %d digest tokens)",
		cons.Name, cset, lay.Name, lset, *k, len(m.Blocks), m.DModel, m.Decoder.Working, m.Decoder.Digest)
	f, err := cotseq.Build(ctx, m, l, ref, cotseq.Options{Count: *count, Seed: *seed, Verify: *verify, Source: src, Instance: *instance})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if err := f.Write(w); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d sequences of %d prompt + %d working + %d digest tokens (%d generated by the decoder and checked); %s\n",
		*out, len(f.Sequences), f.Prompt, f.Working, f.Digest, f.Verified, src)
	return nil
}
