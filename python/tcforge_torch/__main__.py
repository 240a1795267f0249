"""python3 -m tcforge_torch CONFIG: input bit strings on stdin, one a line
(character i is input bit i), output bit strings on stdout.
python3 -m tcforge_torch train CONFIG ...: train a model of its shape
(tcforge_torch/train.py, docs/learnability.md)."""

import sys

import torch

from . import FormatError, load


def main(argv):
    if len(argv) > 1 and argv[1] == "train":
        from .train import main as train
        return train(argv[2:])
    if len(argv) != 2:
        print("usage: python3 -m tcforge_torch CONFIG < inputs > outputs", file=sys.stderr)
        return 2
    try:
        m = load(argv[1])
    except (FormatError, OSError) as e:
        print(f"tcforge_torch: {e}", file=sys.stderr)
        return 1
    lines = [l.strip() for l in sys.stdin if l.strip()]
    for i, l in enumerate(lines):
        if len(l) != m.inputs or set(l) - {"0", "1"}:
            print(f"tcforge_torch: input line {i + 1}: want {m.inputs} bits of 0/1", file=sys.stderr)
            return 1
    bits = torch.tensor([[int(c) for c in l] for l in lines], dtype=torch.uint8).reshape(len(lines), m.inputs)
    out = m.run(bits)
    sys.stdout.write("".join("".join(str(int(b)) for b in row) + "\n" for row in out.tolist()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
