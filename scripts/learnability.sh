#!/usr/bin/env bash
# The learnability experiments of docs/learnability.md (issue 29): exports
# the instances of configs/learnability.hcl, then trains at their shapes
# with `python3 -m tcforge_torch train`, one CPU thread a run, nice -n 10.
# Every run writes docs/learnability/runs/NAME.{csv,json}; the table and
# plots of docs/learnability.md come from them
# (scripts/learnability_table.py --write).
#
#   scripts/learnability.sh export            # the models (out/learnability/models)
#   scripts/learnability.sh controls scratch widths long answer sha3
#   scripts/learnability.sh all
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/learnability}
RUNS=${RUNS:-docs/learnability/runs}
M=$OUT/models
SEEDS=${SEEDS:-"0 1 2"}
SIGMAS=${SIGMAS:-"0 1e-8 1e-7 1e-6 1e-5 1e-4"}
ANSWER_SEEDS=${ANSWER_SEEDS:-0}

train() {
  nice -n 10 env PYTHONPATH=python /usr/bin/python3 -m tcforge_torch train "$@" --out "$RUNS" --plot 0 --skip-done 1 --progress never
}
adder=$M/learn-adder.fusion.tokens-as-states-stock.json
keccak() { echo "$M/learn-keccak.log_w-$1_rounds-$2.fusion.tokens-as-states-stock.json"; }
sha256() { echo "$M/learn-sha256.rounds-$1.fusion.no-attention-mlp.json"; }
sha3=$M/learn-sha3-256.fusion.tokens-as-states-stock.json

step_export() {
  go build -o bin/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
  go run ./host/cmd/tcforge run --plugin-dir bin --progress never --out "$OUT" --export "$M" configs/learnability.hcl
}

# Controls: the adder from scratch (must reach 100 % exact on held-out
# inputs) and the constant predictor on every instance.
step_controls() {
  for s in $SEEDS; do
    train "$adder" --instance "adder n=8" --seed "$s" --steps 1500 --train 4096 --heldout 1024
  done
  train "$adder" --instance "adder n=8" --init constant --train 4096 --heldout 1024
  for w in 0 1; do for r in 1 2 3; do
    train "$(keccak $w $r)" --instance "Keccak w=$((1 << w)) r=$r" --init constant --train 16384 --heldout 1024
  done; done
  for r in 1 2; do
    train "$(sha256 $r)" --instance "SHA-256 r=$r" --init constant --train 16384 --heldout 1024
  done
}

# From scratch at the compiled shape: toy Keccak w = 1, 2, rounds 1–3;
# SHA-256 at 1 and 2 rounds.
step_scratch() {
  for s in $SEEDS; do
    for w in 0 1; do for r in 1 2 3; do
      train "$(keccak $w $r)" --instance "Keccak w=$((1 << w)) r=$r" --seed "$s" --steps 1500 --log-every 100 --train 16384 --heldout 1024
    done; done
    for r in 1 2; do
      train "$(sha256 $r)" --instance "SHA-256 r=$r" --seed "$s" --steps 1000 --log-every 100 --train 16384 --heldout 1024
    done
  done
}

# From scratch at 2× and ½× the width (d_model and FFN).
step_widths() {
  for s in $SEEDS; do for x in 2 0.5; do
    train "$adder" --instance "adder n=8" --width "$x" --seed "$s" --steps 1500 --train 4096 --heldout 1024
    train "$(keccak 0 1)" --instance "Keccak w=1 r=1" --width "$x" --seed "$s" --steps 1500 --log-every 100 --train 16384 --heldout 1024
  done; done
}

# A longer budget for the smallest instance that failed: toy Keccak w = 1,
# one round, 10× the steps (one seed).
step_long() {
  train "$(keccak 0 1)" --instance "Keccak w=1 r=1" --name long-keccak-w1-r1.seed0 --experiment "scratch w×1, 10× steps" --seed 0 --steps 15000 --log-every 500 --train 16384 --heldout 1024
}

# From the answer: the compiled weights plus noise of relative size σ,
# then Adam at lr 1e-6 (the basin); one seed (ANSWER_SEEDS) for the CPU
# budget.
step_answer() {
  for s in $ANSWER_SEEDS; do for sg in $SIGMAS; do
    train "$adder" --instance "adder n=8" --init answer --sigma "$sg" --lr 1e-6 --seed "$s" --steps 300 --stop-exact 0 --train 4096 --heldout 1024
    for w in 0 1; do for r in 1 2 3; do
      train "$(keccak $w $r)" --instance "Keccak w=$((1 << w)) r=$r" --init answer --sigma "$sg" --lr 1e-6 --seed "$s" --steps 300 --stop-exact 0 --train 4096 --heldout 1024
    done; done
  done; done
}

# Full SHA3-256 (48 stock layers) from the answer only: one seed, six
# steps (3 CPU s a step at batch 8), Adam at lr 1e-7.
step_sha3() {
  for sg in 0 1e-9 1e-8 1e-7 1e-6 1e-5; do
    train "$sha3" --instance "SHA3-256" --init answer --sigma "$sg" --lr 1e-7 --seed 0 --steps 6 --log-every 3 --batch 8 --stop-exact 0 --train 64 --heldout 32
  done
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] || [ "${steps[0]}" = all ] && steps=(export controls scratch widths long answer sha3)
for st in "${steps[@]}"; do
  TIMEFORMAT="learnability: $st: %R s wall, %U s user, %S s system CPU"
  time "step_$st"
done
