"""Trace supervision for `python3 -m tcforge_torch train --trace D`
(docs/learnability.md, issue 36): besides the output bits, a loss on the
residual dimensions that the teacher's label table (NAME.labels.json,
docs/labels.md) names, at the block boundaries a density D chooses.

The targets are the circuit values the labels name, read off the teacher
(the exported exact model) at the labelled dimensions and rounded to the
integers they are (labelcheck guarantees the teacher within 0.25 of them; a
value farther off is refused, naming the label). The student keeps the
compiled shape (or a wider one: its residual must have every supervised
dimension), so label (token, dim) at boundary b is the student's x after b
blocks at (token, dim).

Densities:

    none      no trace loss
    every     every boundary 0 … blocks (every level: boundary b holds level b)
    K         every K-th: boundaries 0, K, 2K, … (K = 1 is every)
    rounds    the round boundaries only: for each round r but the last, the
              boundary before the first value named "round r+1" appears
              (every value there belongs to round r or earlier), and the
              last boundary (the output's level)

With units (`--trace-units 1`), the FFN hidden units of the block before
each supervised boundary b ≥ 1 are supervised too, every unit the label
table says writes a value: the student's unit i of block b − 1 (after its
activation) must hold the teacher's. In the compiled models these units
are the circuit's gates (a threshold gate [s ≥ θ] is two ReLU units, or
one gated SiLU unit, of the sum s its row reads), while the residual holds
only what later levels read of them (forms, partials: sums and parities
of gates), so units show the working one step finer.

The student holds each label's value standardized: (value − m) / s, m and
s the label's mean and standard deviation over the training inputs (s at
least 0.1), so its residual is the circuit's values up to a fixed affine
map per label (the magnitudes of the compiled model, up to 2¹³ where it pins
a LayerNorm, are out of reach of Adam's steps and blow up an un-normed
MLP). Loss: trace_weight × the mean over the supervised (sample, label)
pairs of (x − (target − m) / s)² (units standardized the same way,
over every token).
"""

import re

import torch

from . import FormatError
from .labels import hidden_states, load_labels

__all__ = ["boundaries", "Trace", "parse_density", "DENSITY_HELP"]

DENSITY_HELP = "none, every, K (every K-th boundary), or rounds (round boundaries only)"

_ROUND = re.compile(r"\bround (\d+)\b")


def parse_density(text):
    """A density string → "none", "every", "rounds" or an int K ≥ 1;
    raises ValueError naming what it wants."""
    if text in ("none", "every", "rounds"):
        return text
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1 or str(k) != text:
        raise ValueError(f"want {DENSITY_HELP}, got {text!r}")
    return "every" if k == 1 else k


def density_name(d):
    """The density as the table writes it."""
    return {"none": "no trace", "every": "trace every level", "rounds": "trace at round boundaries"}.get(d, f"trace every {d} levels")


def round_boundaries(labels):
    """The round boundaries of a label table (see the module doc): for each
    round r that a later round follows, the boundary before the first
    value named "round r+1"; then the last boundary."""
    first = {}
    for v in labels.values:
        if v["kind"] == "aux":
            continue
        m = _ROUND.search(v.get("name", ""))
        if m:
            r = int(m.group(1))
            first[r] = min(first.get(r, v["from"]), v["from"])
    out = {labels.blocks}
    for r in sorted(first):
        if r > min(first) and first[r] >= 1:
            out.add(first[r] - 1)
    return sorted(out)


def boundaries(labels, density):
    """The supervised boundaries of a label table at a density."""
    if density == "none":
        return []
    if density == "rounds":
        return round_boundaries(labels)
    k = 1 if density == "every" else density
    return list(range(0, labels.blocks + 1, k))


class Trace:
    """The supervised labels of a teacher at a density: per boundary, the
    (token, dim) places and the targets on given inputs; with units, also
    the FFN hidden units of the block before each supervised boundary that
    the label table says write something (their values after the
    activation, on every token)."""

    def __init__(self, teacher, density, d_model, tokens, labels_path=None, units=False, ffn=None):
        self.density, self.units = density, bool(units)
        self.labels = load_labels(teacher, labels_path)
        self.path = self.labels.path
        self.teacher = teacher
        self.boundaries = boundaries(self.labels, density)
        self.places = []  # per supervised boundary: (labels, token index, dim index)
        for b in self.boundaries:
            vals, tok, dim = [], [], []
            for v in self.labels.at(b):
                for t in (range(tokens) if v["token"] < 0 else (v["token"],)):
                    if v["dim"] >= d_model:
                        raise FormatError(f"{self.path}: {v['kind']} label of level {v['level']} index {v['index']} ({v.get('name', '')!r}) "
                                          f"is at dimension {v['dim']}, but the student's d_model is {d_model}: trace supervision "
                                          f"needs the compiled width or wider (--width ≥ 1)")
                    vals.append(v)
                    tok.append(t)
                    dim.append(v["dim"])
            self.places.append((vals, torch.tensor(tok, dtype=torch.long), torch.tensor(dim, dtype=torch.long)))
        self.count = sum(len(p[0]) for p in self.places)
        # per supervised block (the one before a supervised boundary b ≥ 1):
        # (block, unit indices)
        self.unit_places = []
        if self.units:
            nb = self.labels.blocks
            used = {}
            for u in self.labels.units:
                if u["kind"] == "ffn" and not u.get("name", "").startswith("writes nothing"):
                    used.setdefault(u["block"], []).append(u["index"])
            for b in self.boundaries:
                if b >= 1 and used.get(b - 1):
                    idx = sorted(set(used[b - 1]))
                    if ffn is not None and idx[-1] >= ffn[b - 1]:
                        raise FormatError(f"{self.path}: FFN unit {idx[-1]} of block {b - 1} is labelled, but the student's block has "
                                          f"{ffn[b - 1]} units: unit supervision needs the compiled width (--width 1)")
                    self.unit_places.append((b - 1, torch.tensor(idx, dtype=torch.long)))
            if not self.unit_places:
                raise FormatError(f"{self.path}: no FFN unit of the blocks before boundaries {self.boundaries} of {nb} is labelled "
                                  f"as writing a value: nothing for --trace-units to supervise")
        self.unit_count = sum(len(ix) for _, ix in self.unit_places) * tokens
        self.scale = None

    def targets(self, bits, chunk=2048):
        """The circuit values at the supervised places for input bits
        [n, inputs]: one float32 tensor [n, labels + units] (boundaries in
        order, then the units), each residual value the teacher's rounded
        to its integer, each unit the teacher's activation."""
        if not self.places and not self.unit_places:
            return torch.zeros(bits.shape[0], 0)
        want = set(self.boundaries)
        last = max(self.boundaries[-1], max((blk + 1 for blk, _ in self.unit_places), default=0))
        parts, uparts = [], []
        for lo in range(0, bits.shape[0], chunk):
            got, units = [], []
            for b, x in enumerate(hidden_states(self.teacher, bits[lo:lo + chunk], units=units if self.unit_places else None)):
                if b in want:
                    vals, tok, dim = self.places[self.boundaries.index(b)]
                    got.append(x[:, tok, dim].to(torch.float32))
                if b >= last:
                    break
            parts.append(torch.cat(got, dim=1))
            if self.unit_places:
                uparts.append(torch.cat([units[blk][:, :, ix].reshape(units[blk].shape[0], -1).to(torch.float32)
                                         for blk, ix in self.unit_places], dim=1))
        y = torch.cat(parts)
        r = y.round()
        off = (y - r).abs()
        if y.numel() and float(off.max()) > 0.25:
            k = int(off.max(0).values.argmax())
            v = [v for vals, _, _ in self.places for v in vals][k]
            raise FormatError(f"{self.path}: the teacher's value at {v['kind']} label of level {v['level']} index {v['index']} "
                              f"({v.get('name', '')!r}, token {v['token']}, dim {v['dim']}) is {float(y[:, k][off[:, k].argmax()]):.4g}, "
                              f"{float(off.max()):.3g} from an integer: the label table does not describe this model")
        if uparts:
            u = torch.cat(uparts)
            if not bool(torch.isfinite(u).all()):
                raise FormatError(f"{self.path}: the teacher's FFN units are not finite on these inputs")
            r = torch.cat([r, u], dim=1)
        return r

    def fit_scale(self, y):
        """Sets each label's mean and scale from the training targets y
        [n, labels]: its mean and standard deviation (at least 0.1)."""
        self.mean = y.mean(0)
        self.scale = y.std(0, unbiased=False).clamp(min=0.1) if y.shape[0] > 1 else torch.ones(y.shape[1])

    def student_values(self, hidden, units=None):
        """The student's values at the supervised places, [n, labels +
        units], from its residual stream at every boundary (a list,
        boundary 0 first) and its blocks' FFN units."""
        got = [hidden[b][:, tok.to(hidden[b].device), dim.to(hidden[b].device)]
               for b, (_, tok, dim) in zip(self.boundaries, self.places)]
        for blk, ix in self.unit_places:
            u = units[blk][:, :, ix.to(units[blk].device)]
            got.append(u.reshape(u.shape[0], -1))
        return torch.cat(got, dim=1)

    def standard(self, y):
        """Targets y standardized: what the student's dimensions must hold."""
        return (y - self.mean.to(y.device)) / self.scale.to(y.device)

    def mse(self, hidden, units, y):
        """The mean squared error of the student's values against the
        standardized targets y."""
        return ((self.student_values(hidden, units) - self.standard(y)) ** 2).mean()

    def describe(self):
        """A line for stderr and the run's JSON."""
        d = {"labels": self.path, "density": self.density if isinstance(self.density, str) else int(self.density),
             "boundaries": self.boundaries, "supervised": self.count, "blocks": self.labels.blocks}
        if self.units:
            d["units"] = [[blk, len(ix)] for blk, ix in self.unit_places]
            d["supervised_units"] = self.unit_count
        return d
