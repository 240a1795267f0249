"""python3 -m tcforge_torch train EXPORT_CONFIG [options]: can gradient
descent find the compiled weights?

Reads the shape of a model that `tcforge run --export` wrote (a stock
tokens-as-states model: tokens, d_model, layers, heads, FFN; or a
no-attention MLP: d_model and each block's FFN width), builds a trainable
model of that shape (optionally with its width scaled), and trains it on
(input bits → output bits) with binary cross-entropy on the output bits and
Adam. The labels are the outputs of the exported exact model itself: the
*teacher*. `tcforge run --export` writes only models verified bit for bit
against the layered circuit, itself verified against the construction's
reference, so the teacher computes the construction.

Experiments (--init): `scratch` (PyTorch's default initialisation),
`answer` (the compiled weights, each tensor plus Gaussian noise of standard
deviation σ times the tensor's RMS: --sigma), and `constant` (no training:
each output bit predicted by its majority value in the training labels;
0.5 accuracy on a balanced bit).

Every run writes OUT/NAME.csv (one row a log point, flushed as it is
written, so Ctrl-C keeps what was logged), OUT/NAME.json (the run's
settings and outcome) and OUT/NAME.svg (bit accuracy and exact-output rate
over the steps). Held-out inputs are random inputs disjoint from the
training set. docs/learnability.md has the experiments.
"""

import csv
import hashlib
import json
import math
import os
import sys
import time

import torch

from . import ArgumentParser, FormatError, Signalled, atomic_write, load, read_json, read_regular
from . import trace as trace_mod
from .labels import stock_layer_units

__all__ = ["Refused", "inspect", "main"]

# The CSV's columns: held-out figures at each log row, then times, then the
# held-out trace MSE (nan without --trace) and exact-working rate (chain of
# thought; nan otherwise).
_COLUMNS = ["step", "heldout_loss", "bit_acc", "var_bit_acc", "exact", "train_exact", "elapsed_s", "cpu_s", "trace_mse", "working_exact"]


class Refused(ValueError):
    """A model the harness cannot train, with the reason (its message
    begins "refused: ")."""

    def __str__(self):
        return "refused: " + super().__str__()


def _dense_params(cfg):
    return sum(int(t["rows"]) * int(t["cols"]) for t in cfg["tensors"].values())


def inspect(config_path, max_params=50_000_000, max_tokens=4096, scale=1.0):
    """Reads an export's JSON config (not its weights) and returns
    (kind, cfg): kind "stock" (every block a stock encoder layer) or "mlp"
    (one token, FFN blocks only). Raises Refused with the reason for a model
    it cannot train: too large for a trainable dense copy, or attention that
    is not a stock layer."""
    cfg = read_json(config_path)
    if isinstance(cfg, dict) and cfg.get("format") == "tcforge-cot-sequences":
        return "cot", cfg
    try:
        arch, T, d = cfg.get("architecture", "?"), int(cfg["tokens"]), int(cfg["d_model"])
        _dense_params(cfg), cfg["blocks"][:0]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise FormatError(f"{config_path}: malformed config ({type(e).__name__}: {e})") from None
    dense = _dense_params(cfg) * max(1.0, scale) ** 2
    if T > max_tokens:
        raise Refused(f"{config_path}: {arch} with {T:,} tokens × d_model {d:,}: a trainable copy would hold "
                      f"a {T:,} × {T:,} attention matrix per head and sample ({4 * T * T / 2**30:,.0f} GiB in float32) "
                      f"and {_dense_params(cfg):,} dense parameters; this harness trains up to {max_tokens:,} tokens "
                      f"(--max-tokens) and {max_params:,} dense parameters (--max-params)")
    if dense > max_params:
        raise Refused(f"{config_path}: {arch}: {dense:,.0f} dense parameters at width ×{scale:g} exceed "
                      f"--max-params {max_params:,}: a trainable copy is dense (every weight a parameter)")
    blocks = cfg["blocks"]
    if "decoder" in cfg:
        raise Refused(f"{config_path}: {arch}: a decoder (tokens as time: greedy decoding writes the working); the harness "
                      f"trains single-pass models (stock tokens-as-states, one-token no-attention MLPs)")
    if blocks and all(b.get("layer") for b in blocks):
        return "stock", cfg
    if T == 1 and all(not b.get("layer") and b.get("ffn") for b in blocks):
        for i, b in enumerate(blocks):
            a = b.get("attention")
            if a and (len(a.get("heads", [])) != 1 or a.get("mode") != "softmax"):
                raise Refused(f"{config_path}: block {i}: one-token attention with {len(a.get('heads', []))} heads ({a.get('mode')}); "
                              f"the harness trains one softmax head over the one token")
        return "mlp", cfg
    raise Refused(f"{config_path}: {arch} ({T:,} tokens): the harness trains stock tokens-as-states models "
                  f"(every block an nn.TransformerEncoderLayer) and one-token no-attention models, not this mapping's "
                  f"attention (hard or softmax over tokens with per-head q/k/v/o)")


def _round_to(x, m):
    return max(m, int(round(x / m)) * m)


class StockNet(torch.nn.Module):
    """Input map (one nn.Linear shared by the tokens) + position embedding +
    stock nn.TransformerEncoder + readout nn.Linear; logit = scale · readout."""

    def __init__(self, tokens, bits, d, nhead, ffn, layers, outs, eps):
        super().__init__()
        self.embed = torch.nn.Linear(bits, d, bias=False)
        self.pos = torch.nn.Parameter(0.02 * torch.randn(tokens, d))
        layer = torch.nn.TransformerEncoderLayer(d, nhead, ffn, dropout=0.0, activation="relu",
                                                 batch_first=True, norm_first=True, layer_norm_eps=eps)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.readout = torch.nn.Linear(d, outs)
        self.scale = torch.nn.Parameter(torch.tensor(1.0))

    def forward(self, tok):
        return self.scale * self.readout(self.enc(self.embed(tok) + self.pos))

    def forward_hidden(self, tok):
        """(logits, [x after the embedding, x after each block], [each
        block's FFN hidden units after the activation])."""
        x = self.embed(tok) + self.pos
        hs, us = [x], []
        for layer in self.enc.layers:
            x, u = stock_layer_units(layer, x)
            hs.append(x)
            us.append(u)
        return self.scale * self.readout(x), hs, us


class RMSNorm(torch.nn.Module):
    """x · g / sqrt(mean(x²) + eps), g trainable (PyTorch 1.13 has no
    nn.RMSNorm)."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * self.weight / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps)


class MLPNet(torch.nn.Module):
    """The no-attention MLP: x = base + input bits' rows; per block
    x (+)= w_out (silu(w_gate x) ⊙ w_value x); logit k = scale·(x[dim_k] − t_k).
    With norms (the residual variant): per block x (+)= o(v(RMSNorm(x)))
    (one token's attention: the softmax over one position is 1, so q and k
    do nothing) when the block has attention, then the FFN reads
    RMSNorm(x)."""

    def __init__(self, inputs, d, hidden, residual, dims, thresholds, norms=None):
        super().__init__()
        self.embed = torch.nn.Linear(inputs, d)
        self.gate = torch.nn.ModuleList(torch.nn.Linear(d, h, bias=False) for h in hidden)
        self.value = torch.nn.ModuleList(torch.nn.Linear(d, h, bias=False) for h in hidden)
        self.out = torch.nn.ModuleList(torch.nn.Linear(h, d, bias=False) for h in hidden)
        self.residual = list(residual)
        self.register_buffer("dims", torch.as_tensor(dims, dtype=torch.long))
        self.threshold = torch.nn.Parameter(torch.as_tensor(thresholds, dtype=torch.float32).clone())
        self.scale = torch.nn.Parameter(torch.tensor(1.0))
        self.norms = norms
        if norms is not None:
            # per block: (attention: None or (dv, residual, eps or None), ffn norm eps or None)
            ident = torch.nn.Identity
            self.anorm = torch.nn.ModuleList(RMSNorm(d, a[2]) if a and a[2] is not None else ident() for a, _ in norms)
            self.attn_v = torch.nn.ModuleList(torch.nn.Linear(d, a[0], bias=False) if a else ident() for a, _ in norms)
            self.attn_o = torch.nn.ModuleList(torch.nn.Linear(a[0], d, bias=False) if a else ident() for a, _ in norms)
            self.fnorm = torch.nn.ModuleList(RMSNorm(d, e) if e is not None else ident() for _, e in norms)

    def _blocks(self, x, units=None):
        for i, (g, v, o, r) in enumerate(zip(self.gate, self.value, self.out, self.residual)):
            if self.norms is not None:
                a = self.norms[i][0]
                if a:
                    y = self.attn_o[i](self.attn_v[i](self.anorm[i](x)))
                    x = x + y if a[1] else y
                h = self.fnorm[i](x)
            else:
                h = x
            u = torch.nn.functional.silu(g(h)) * v(h)
            if units is not None:
                units.append(u.unsqueeze(1))
            z = o(u)
            x = x + z if r else z
            yield x

    def activation_std(self, bits):
        """The standard deviation of x after the embedding and after each
        block, on the sample bits."""
        with torch.no_grad():
            x = self.embed(bits)
            return [float(x.std())] + [float(y.std()) for y in self._blocks(x)]

    def forward(self, bits):
        return self.forward_hidden(bits)[0]

    def forward_hidden(self, bits):
        """(logits, [x after the embedding, x after each block], each
        [n, 1, d] as the residual of a one-token model, [each block's
        FFN hidden units silu(gate)·value, [n, 1, F]])."""
        x = self.embed(bits)
        hs, us = [x.unsqueeze(1)], []
        for x in self._blocks(x, us):
            hs.append(x.unsqueeze(1))
        return self.scale * (x[:, self.dims] - self.threshold), hs, us


class Task:
    """The trainable model of an export's shape and the maps between the
    teacher's bits and the model's tensors."""

    def __init__(self, kind, cfg, teacher, scale, init, sigma, gen, noise="tensor"):
        self.kind, self.teacher = kind, teacher
        m = teacher
        if init == "answer" and scale != 1:
            raise Refused(f"{m.path}: --init answer needs the compiled width (--width 1), not ×{scale:g}")
        if kind == "stock":
            d = _round_to(m.d * scale, m.nhead)
            ffn = max(1, int(round(m.ffn * scale)))
            self.net = StockNet(m.tokens, m.in_index.shape[1], d, m.nhead, ffn, m.layers, m.out_index.shape[1], m.eps)
            self.shape = {"tokens": m.tokens, "d_model": d, "blocks": m.layers, "heads": m.nhead, "ffn": ffn}
            # flat output k = logit [token, item] of the [n, T·J] view
            J = m.out_index.shape[1]
            flat = torch.full((m.outputs,), -1, dtype=torch.long)
            for t in range(m.tokens):
                for j in range(J):
                    k = int(m.out_index[t, j])
                    if k >= 0:
                        flat[k] = t * J + j
            self.flat = flat
            if init == "answer":
                with torch.no_grad():
                    self.net.embed.weight.copy_(m.input_linear().weight)
                    self.net.pos.copy_(m.pos)
                    self.net.enc.load_state_dict(m.state_dict(), strict=True)
                    r = m.readout_linear()
                    self.net.readout.weight.copy_(r.weight)
                    self.net.readout.bias.copy_(r.bias)
        else:
            d = int(round(m.d * scale))
            blocks = cfg["blocks"]
            hidden = [max(1, int(round(m.W[b["ffn"]["w_gate"]].shape[0] * scale))) for b in blocks]
            if int(m.out_dim.max()) >= d or len(set(m.out_dim.tolist())) < m.outputs:
                raise Refused(f"{m.path}: width ×{scale:g} gives d_model {d}, too narrow for the readout's {m.outputs} output dimensions")
            norms = None
            if any(b.get("attention") or b["ffn"].get("norm") for b in blocks):
                if init == "answer":
                    raise Refused(f"{m.path}: --init answer: the harness copies the un-normed MLP's weights, not the residual variant's")
                eps = lambda n: float(n.get("eps", 1e-6)) if n else None  # noqa: E731
                norms = [((max(1, int(round(m.W[b["attention"]["heads"][0]["v"]].shape[0] * scale))), bool(b["attention"]["residual"]),
                           eps(b["attention"].get("norm"))) if b.get("attention") else None, eps(b["ffn"].get("norm"))) for b in blocks]
            self.net = MLPNet(m.inputs, d, hidden, [b["ffn"]["residual"] for b in blocks], m.out_dim, m.out_threshold, norms)
            self.shape = {"tokens": 1, "d_model": d, "blocks": len(blocks), "heads": 0, "ffn": max(hidden)}
            if norms is not None:
                self.shape["norm"] = "rms"
            if init == "answer":
                with torch.no_grad():
                    dense = m._dense
                    w_in = torch.zeros(m.inputs, m.d)
                    w_in += dense(m.input)
                    self.net.embed.weight.copy_(w_in.T)
                    self.net.embed.bias.copy_(dense(m.base).reshape(-1))
                    for i, b in enumerate(blocks):
                        self.net.gate[i].weight.copy_(dense(m.W[b["ffn"]["w_gate"]]))
                        self.net.value[i].weight.copy_(dense(m.W[b["ffn"]["w_value"]]))
                        self.net.out[i].weight.copy_(dense(m.W[b["ffn"]["w_out"]]))
        self.shape["params"] = sum(p.numel() for p in self.net.parameters())
        if init == "answer":
            with torch.no_grad():
                # Margins are ≥ 0.5 on the value: a logit scale of 10 makes the
                # answer's loss small (it changes no output bit).
                self.net.scale.fill_(10.0)
                for name, p in self.net.named_parameters():
                    if name == "scale" or p.numel() == 0:
                        continue
                    z = torch.randn(p.shape, generator=gen)
                    if noise == "entry":
                        p.mul_(1 + sigma * z)
                    else:
                        p.add_(sigma * float(p.pow(2).mean().sqrt()) * z)

    def features(self, bits):
        """Teacher input bits [n, inputs] → the net's input tensor."""
        if self.kind == "stock":
            return self.teacher.token_bits(bits)
        return bits.to(torch.float32)

    def logits(self, x):
        return self._flat(self.net(x))

    def logits_hidden(self, x):
        """(logits, the residual stream at every block boundary, every
        block's FFN hidden units)."""
        y, hs, us = self.net.forward_hidden(x)
        return self._flat(y), hs, us

    def _flat(self, y):
        if self.kind == "stock":
            return y.reshape(y.shape[0], -1)[:, self.flat]
        return y


def _random_bits(n, inputs, gen):
    return torch.randint(0, 2, (n, inputs), generator=gen, dtype=torch.uint8)


def make_data(inputs, n_train, n_held, gen):
    """n_train training and n_held held-out random inputs, disjoint (and
    each set without repeats); fewer where the input space is smaller."""
    space = 2 ** inputs if inputs < 62 else None
    if space is not None and n_train + n_held > space:
        raise Refused(f"{n_train} training + {n_held} held-out inputs exceed the {space} inputs of {inputs} bits")
    seen, rows = set(), []
    while len(rows) < n_train + n_held:
        for r in _random_bits(2 * (n_train + n_held - len(rows)), inputs, gen):
            key = bytes(r.tolist())
            if key not in seen:
                seen.add(key)
                rows.append(r)
                if len(rows) == n_train + n_held:
                    break
    x = torch.stack(rows)
    return x[:n_train], x[n_train:]


def teach(teacher, bits, chunk=256):
    """The teacher's output bits of bits, in chunks."""
    return torch.cat([teacher.run(bits[i:i + chunk]) for i in range(0, bits.shape[0], chunk)]).to(torch.float32)


def _svg(rows, title):
    """A small hand-written SVG: bit accuracy, varying-bit accuracy and
    exact-output rate (held-out) over the steps."""
    W, H, L, B = 480, 300, 50, 40
    steps = [r["step"] for r in rows] or [0]
    smax = max(steps) or 1

    def px(s):
        return L + (W - L - 10) * s / smax

    def py(v):
        return H - B - (H - B - 30) * v

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="12">{_esc(title)}</text>']
    for v in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{L}" y1="{py(v):.1f}" x2="{W - 10}" y2="{py(v):.1f}" stroke="#ddd"/>'
                   f'<text x="{L - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{L}" y="{H - B + 14}">0</text><text x="{W - 10}" y="{H - B + 14}" text-anchor="end">{smax}</text>'
               f'<text x="{(W + L) / 2}" y="{H - 8}" text-anchor="middle">step</text>')
    for i, (col, color) in enumerate((("bit_acc", "#1f77b4"), ("var_bit_acc", "#2ca02c"), ("exact", "#d62728"))):
        pts = " ".join(f"{px(r['step']):.1f},{py(r[col]):.1f}" for r in rows)
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<text x="{L + 8 + 120 * i}" y="{H - B - 6 - (H - B - 40)}" fill="{color}">{col}</text>')
    out.append("</svg>\n")
    return "\n".join(out)


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Progress:
    """A progress bar on stderr (on a terminal, or always/never)."""

    def __init__(self, total, mode):
        self.total, self.on = total, mode == "always" or (mode == "auto" and sys.stderr.isatty())

    def show(self, step, text):
        if not self.on:
            return
        n = int(30 * step / max(1, self.total))
        sys.stderr.write(f"\r[{'#' * n}{'.' * (30 - n)}] {step}/{self.total} {text}  ")
        sys.stderr.flush()

    def done(self):
        if self.on:
            sys.stderr.write("\n")


def _parser():
    p = ArgumentParser(prog="python3 -m tcforge_torch train", description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="an exported model's JSON config (tcforge run --export DIR), or a chain-of-thought sequence file (tcforge-cot-sequences)")
    p.add_argument("--out", default="out/learnability/runs", help="directory for NAME.csv, NAME.json, NAME.svg")
    p.add_argument("--name", help="run name (default: config name, experiment, seed)")
    p.add_argument("--instance", help="instance label for the table (default: the config's file name)")
    p.add_argument("--experiment", help="experiment label for the table (default: from --init, --width, --sigma, --trace)")
    p.add_argument("--init", choices=("scratch", "answer", "constant"), default="scratch")
    p.add_argument("--sigma", type=float, default=0.0, help="with --init answer: noise σ relative to each tensor's RMS")
    p.add_argument("--noise", choices=("tensor", "entry"), default="tensor",
                   help="with --init answer: N(0, (σ·RMS of the tensor)²) added to every entry (tensor), or each entry times 1 + σ·N(0, 1) (entry: zeros stay zero)")
    p.add_argument("--width", type=float, default=1.0, help="width scale of d_model and FFN (×2, ×0.5)")
    p.add_argument("--steps", type=int, default=1000, help="step budget")
    p.add_argument("--opt", choices=("adam", "sgd"), default="adam", help="optimiser (plain SGD: no momentum)")
    p.add_argument("--plot", type=int, default=1, help="write NAME.svg (0: not)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--schedule", choices=("constant", "cosine"), default="constant",
                   help="learning rate over the steps: constant, or cosine from --lr to 0 at --steps")
    p.add_argument("--train", type=int, default=4096, help="training inputs (a fixed set)")
    p.add_argument("--heldout", type=int, default=1024, help="held-out inputs, disjoint from the training set")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--stop-exact", type=int, default=1, help="stop once the exact rate (--stop-on) reaches --stop-at at a log point (0: run the budget)")
    p.add_argument("--stop-at", type=float, default=1.0, help="the exact rate that stops a run (with --stop-exact 1)")
    p.add_argument("--stop-on", choices=("heldout", "train"), default="heldout",
                   help="the exact rate --stop-at reads: held-out, or the training inputs' (then the held-out figure is not selected on)")
    p.add_argument("--seed", type=int, default=0, help="initialisation, noise and batch order")
    p.add_argument("--data-seed", type=int, default=1, help="training and held-out inputs")
    p.add_argument("--trace", default="none", help=f"trace supervision from NAME.labels.json: {trace_mod.DENSITY_HELP}")
    p.add_argument("--trace-units", type=int, default=0,
                   help="1: with --trace, also supervise the FFN hidden units (the circuit's gates) of the block before each supervised boundary")
    p.add_argument("--trace-weight", type=float, default=1.0, help="the trace loss's weight beside the output loss")
    p.add_argument("--labels", help="the label table (default: the config's NAME.labels.json)")
    p.add_argument("--working", default="1", help="chain of thought: the working kept, every K-th step (1: every step, 2: every other, 0: none, digest only)")
    p.add_argument("--layers", type=int, default=0, help="chain of thought: layers (default: the sequence file's shape)")
    p.add_argument("--d-model", type=int, default=0, help="chain of thought: d_model (default: the sequence file's shape)")
    p.add_argument("--heads", type=int, default=0, help="chain of thought: attention heads (default: the sequence file's shape)")
    p.add_argument("--ffn", type=int, default=0, help="chain of thought: FFN width (default: the sequence file's shape)")
    p.add_argument("--init-from", help="a run's checkpoint (NAME.ckpt): start from its weights where the shapes overlap (a curriculum)")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="write OUT/NAME.ckpt every N steps (a multiple of --log-every) and at the end (0: none)")
    p.add_argument("--resume", type=int, default=0,
                   help="1: continue from OUT/NAME.ckpt if there is one (a stopped run, or a done one given more --steps); skip a done run")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--max-params", type=int, default=50_000_000)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--skip-done", type=int, default=0, help="1: do nothing if OUT/NAME.json says the run is done (resuming a script)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto")
    return p


def _evaluate(task, x, y, device, trace=None, t=None, chunk=512):
    """(loss, per-bit accuracy [outputs], exact-output rate, trace MSE) on
    x, y (and trace targets t)."""
    tot_loss, right, exact, n, tr = 0.0, torch.zeros(y.shape[1]), 0, x.shape[0], 0.0
    with torch.no_grad():
        for i in range(0, n, chunk):
            xi, yi = x[i:i + chunk].to(device), y[i:i + chunk].to(device)
            if trace is not None:
                lg, hs, us = task.logits_hidden(xi)
                tr += float(trace.mse(hs, us, t[i:i + chunk].to(device))) * xi.shape[0]
            else:
                lg = task.logits(xi)
            tot_loss += float(torch.nn.functional.binary_cross_entropy_with_logits(lg, yi, reduction="sum"))
            ok = ((lg >= 0).to(torch.float32) == yi)
            right += ok.sum(0).cpu()
            exact += int(ok.all(1).sum())
    return tot_loss / (n * y.shape[1]), right / n, exact / n, (tr / n if trace is not None else float("nan"))


class BitsJob:
    """Training an export's shape on (input bits → output bits), with the
    trace loss when asked: the data, the model, a batch's loss, a log row's
    figures."""

    def __init__(self, args, kind, cfg, teacher, device):
        self.args, self.kind, self.teacher, self.device = args, kind, teacher, device
        print(f"teacher: {args.config} ({teacher.arch}, {teacher.inputs} input bits → {teacher.outputs} output bits): "
              f"the exported exact model; tcforge run --export writes only models verified bit for bit against the "
              f"layered circuit, itself verified against the construction's reference, so its outputs are the labels "
              f"({teacher.vectors_checked} test vectors of its config reproduced on loading)",
              file=sys.stderr)
        # The model and the label table first (a table that is not this
        # model's is refused before the data are computed); the data from
        # their own generator, so the order changes no figure.
        torch.manual_seed(args.seed)
        gen = torch.Generator().manual_seed(args.seed + 7919)
        self.task = Task(kind, cfg, teacher, args.width, "scratch" if args.init == "constant" else args.init, args.sigma, gen, args.noise)
        self.net = self.task.net
        self.trace, self.ttr, self.tte = None, None, None
        if args.density != "none":
            ffn = [l.linear1.out_features for l in self.net.enc.layers] if kind == "stock" else [g.out_features for g in self.net.gate]
            self.trace = trace_mod.Trace(teacher, args.density, self.task.shape["d_model"], teacher.tokens, args.labels,
                                         units=args.trace_units, ffn=ffn)
        dgen = torch.Generator().manual_seed(args.data_seed)
        xtr, xte = make_data(teacher.inputs, args.train, args.heldout, dgen)
        self.ytr, self.yte = teach(teacher, xtr), teach(teacher, xte)
        self.varying = (self.ytr.min(0).values != self.ytr.max(0).values)
        if self.trace is not None:
            self.ttr, self.tte = self.trace.targets(xtr), self.trace.targets(xte)
            self.trace.fit_scale(self.ttr)
            d = self.trace.describe()
            print(f"trace: {d['supervised']} labelled values" + (f" and {d['supervised_units']} FFN units" if args.trace_units else "") +
                  f" at boundaries {d['boundaries']} of 0…{d['blocks']} "
                  f"({trace_mod.density_name(args.density)}, weight {args.trace_weight:g}), from {d['labels']}", file=sys.stderr)
        self.net.to(device)
        self.task.flat = self.task.flat.to(device) if kind == "stock" else None
        self.ftr, self.fte = self.task.features(xtr), self.task.features(xte)
        self.ntrain = self.ftr.shape[0]
        self.shape = self.task.shape

    def meta(self, cfg):
        t, m = self.teacher, {}
        m.update({"kind": self.kind, "shape": self.task.shape,
                  "compiled_shape": {"tokens": t.tokens, "d_model": t.d, "blocks": len(cfg["blocks"]), "params": _dense_params(cfg)},
                  "inputs": t.inputs, "outputs": t.outputs, "varying_outputs": int(self.varying.sum()),
                  "teacher": "the exported exact model (verified against the construction's reference by tcforge run)"})
        if self.trace is not None:
            m["trace"] = self.trace.describe()
            m["trace"]["weight"] = self.args.trace_weight
        if self.kind == "mlp":
            # With PyTorch's default initialisation the signal of un-normed,
            # gated, non-residual blocks can vanish: record it.
            m["init_activation_std"] = self.task.net.activation_std(self.ftr[:1024].to(self.device))
        return m

    def batch_loss(self, idx):
        xb, yb = self.ftr[idx].to(self.device), self.ytr[idx].to(self.device)
        if self.trace is None:
            return torch.nn.functional.binary_cross_entropy_with_logits(self.task.logits(xb), yb)
        lg, hs, us = self.task.logits_hidden(xb)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(lg, yb)
        return loss + self.args.trace_weight * self.trace.mse(hs, us, self.ttr[idx].to(self.device))

    def row(self, loss):
        """A log row's figures (held-out unless named train_)."""
        if self.args.init == "constant":
            pred = (self.ytr.mean(0) >= 0.5).to(torch.float32)
            ok = (self.yte == pred)
            acc, ex, tr_ex, tr = ok.to(torch.float32).mean(0), float(ok.all(1).to(torch.float32).mean()), float("nan"), float("nan")
        else:
            loss, acc, ex, tr = _evaluate(self.task, self.fte, self.yte, self.device, self.trace, self.tte)
            n = min(1024, self.ntrain)
            _, _, tr_ex, _ = _evaluate(self.task, self.ftr[:n], self.ytr[:n], self.device)
        return {"loss": loss, "bit_acc": float(acc.mean()), "var_bit_acc": float(acc[self.varying].mean()) if bool(self.varying.any()) else 1.0,
                "exact": ex, "train_exact": tr_ex, "trace_mse": tr, "working_exact": float("nan")}

    def constant_loss(self):
        pr = self.ytr.mean(0).clamp(1e-6, 1 - 1e-6)
        return float(-(self.yte * pr.log() + (1 - self.yte) * (1 - pr).log()).mean())


def _check_args(p, args):
    """Refuses (usage error, exit 2) numbers that cannot make a run: a
    negative step budget never ends, a zero batch or log interval divides
    by zero, NaN or infinite rates and widths train nothing."""
    at_least = {"steps": 0, "batch": 1, "train": 1, "heldout": 1, "log_every": 1, "threads": 1, "max_params": 1, "max_tokens": 1,
                "seed": 0, "data_seed": 0, "checkpoint_every": 0, "layers": 0, "d_model": 0, "heads": 0, "ffn": 0}
    for key, lo in at_least.items():
        v = getattr(args, key)
        if not lo <= v <= 1 << 62:
            p.error(f"--{key.replace('_', '-')} must be an integer in [{lo}, 2^62], got {v}")
    for key in ("plot", "stop_exact", "skip_done", "resume", "trace_units"):
        if getattr(args, key) not in (0, 1):
            p.error(f"--{key.replace('_', '-')} must be 0 or 1, got {getattr(args, key)}")
    for key, positive in (("lr", True), ("width", True), ("sigma", False), ("trace_weight", False)):
        v = getattr(args, key)
        if not math.isfinite(v) or (v <= 0 if positive else v < 0):
            p.error(f"--{key.replace('_', '-')} must be a finite number {'> 0' if positive else '>= 0'}, got {v}")
    if not (0 < args.stop_at <= 1):
        p.error(f"--stop-at must be a rate in (0, 1], got {args.stop_at}")
    if args.checkpoint_every and args.checkpoint_every % args.log_every:
        p.error(f"--checkpoint-every must be a multiple of --log-every ({args.log_every}), got {args.checkpoint_every}")
    try:
        args.density = trace_mod.parse_density(args.trace)
    except ValueError as e:
        p.error(f"--trace: {e}")
    if args.trace_units and args.density == "none":
        p.error("--trace-units 1 supervises the units before the supervised boundaries: give --trace every, K or rounds")
    if args.density != "none" and args.init != "scratch":
        p.error(f"--trace {args.trace} trains from scratch (--init scratch), not --init {args.init}")
    if not args.working.isdigit() or str(int(args.working)) != args.working:
        p.error(f"--working must be a step interval K ≥ 0 (1: every step, 2: every other, 0: digest only), got {args.working!r}")
    if args.name is not None and (not args.name or os.path.basename(args.name) != args.name or args.name.startswith(".") or "\0" in args.name):
        p.error(f"--name must be a plain file name (no directory, not hidden), got {args.name!r}")
    dev = args.device.split(":")
    if dev[0] not in ("cpu", "cuda") or len(dev) > 2 or (len(dev) == 2 and not dev[1].isdigit()):
        p.error(f"--device must be cpu, cuda or cuda:N, got {args.device!r}")


# The lock file of an --out directory: a run holds an fcntl lock on one
# byte of it, at an offset given by its name, for its life (the kernel
# drops it when the process ends, SIGKILL included).
LOCK_FILE = ".tcforge-train.lock"


def _lock(out, name):
    """Locks run name in directory out, or raises FormatError if another
    process holds it. Returns the lock's file (keep it open)."""
    import fcntl

    path = os.path.join(out, LOCK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    f = os.fdopen(fd, "r+b")
    offset = int.from_bytes(hashlib.sha256(name.encode()).digest()[:6], "big")
    try:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
    except OSError:
        f.close()
        raise FormatError(f"--out {out}: run {name!r} is being written by another train process (its lock in {path}); "
                          f"wait for it to end, or give another --name or --out") from None
    return f


def _finite(obj):
    """obj with every non-finite float replaced by None (JSON has no NaN:
    a figure a run does not have, such as the trace MSE of a run without
    --trace, is null)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _write_json(path, obj):
    atomic_write(path, lambda f: f.write((json.dumps(_finite(obj), indent=1, allow_nan=False) + "\n").encode()))


def _open_csv(path, lines=()):
    """A new CSV with its header (and lines, a resumed run's rows so far),
    in place of path's whole (a hidden temporary file renamed over it):
    rows are appended to it, one write each, so a run killed at any moment
    leaves whole rows."""
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
    f = open(tmp, "x", newline="")
    try:
        w = csv.writer(f)
        w.writerow(_COLUMNS)
        for line in lines:
            w.writerow(line)
        f.flush()
        os.replace(tmp, path)
    except BaseException:
        f.close()
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return f, w


# The settings a checkpoint must share with the run that resumes it (the
# trajectory's): everything but the budget, the device, threads and output.
_TRAJECTORY = ("init", "sigma", "noise", "width", "opt", "batch", "lr", "schedule", "train", "heldout", "log_every", "stop_exact", "stop_at", "stop_on",
               "seed", "data_seed", "trace", "trace_units", "trace_weight", "working", "layers", "d_model", "heads", "ffn")
CKPT_FORMAT = "tcforge-train-checkpoint"


def _settings(args, config_sha):
    s = {k: getattr(args, k) for k in _TRAJECTORY}
    s["config_sha256"] = config_sha
    if args.schedule != "constant":
        s["steps"] = args.steps  # the schedule spans the budget: a longer budget is another run
    s["init_from"] = os.path.basename(args.init_from) if args.init_from else None
    return s


def _load_ckpt(path):
    try:
        ck = torch.load(path, map_location="cpu")
    except Exception as e:  # a truncated or foreign file: torch raises many kinds
        raise FormatError(f"{path}: not a train checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(ck, dict) or ck.get("format") != CKPT_FORMAT:
        raise FormatError(f"{path}: not a train checkpoint (format {ck.get('format') if isinstance(ck, dict) else type(ck).__name__!r})")
    return ck


def _check_resume(path, ck, settings):
    """Refuses a checkpoint written with other trajectory settings."""
    diff = [k for k in settings if ck["settings"].get(k) != settings[k]]
    if diff:
        k = diff[0]
        raise FormatError(f"{path}: the checkpoint was written with {k} {ck['settings'].get(k)!r}, this run has {settings[k]!r} "
                          f"({len(diff)} settings differ): give the same settings, another --name, or remove the checkpoint")


def copy_overlap(net, state, where):
    """Copies a checkpoint's tensors into net's where names match, each over
    the leading rows and columns both have (an attention in_proj as its q,
    k and v parts); returns how many tensors it copied."""
    own = net.state_dict()
    n = 0
    with torch.no_grad():
        for k, src in state.items():
            if k not in own or own[k].dim() != src.dim():
                continue
            dst = own[k]
            if k.endswith("in_proj_weight") or k.endswith("in_proj_bias"):
                parts = zip(dst.chunk(3, 0), src.chunk(3, 0))
            else:
                parts = [(dst, src)]
            for d, s in parts:
                sl = tuple(slice(0, min(a, b)) for a, b in zip(d.shape, s.shape))
                d[sl] = s[sl].to(d.dtype)
            n += 1
    if n == 0:
        raise FormatError(f"{where}: no tensor of the checkpoint matches this model's (another kind of model)")
    net.load_state_dict(own)
    return n


def _run_name(args, base):
    if args.name:
        return args.name
    if getattr(args, "cot", False):
        name = f"{base}.cot-work{args.working}" + "".join(f"-{k[0]}{getattr(args, k)}" for k in ("layers", "d_model", "heads", "ffn")
                                                           if getattr(args, k))
        if args.lr != 3e-3:
            name += f"-lr{args.lr:g}"
        if args.schedule != "constant":
            name += f"-{args.schedule}"
        return name + f".seed{args.seed}"
    name = f"{base}.{args.init}"
    if args.init == "scratch":
        name += f"-w{args.width:g}"
        if args.density != "none":
            name += f"-trace{args.trace}" + ("u" if args.trace_units else "") + (f"-tw{args.trace_weight:g}" if args.trace_weight != 1 else "")
        if args.lr != 3e-3:
            name += f"-lr{args.lr:g}"
        if args.schedule != "constant":
            name += f"-{args.schedule}"
    if args.init == "answer":
        name += f"-s{args.sigma:g}" + ("e" if args.noise == "entry" else "") + ("-sgd" if args.opt == "sgd" else "")
    return name + f".seed{args.seed}"


def _experiment(args):
    if args.experiment:
        return args.experiment
    if getattr(args, "cot", False):
        k = int(args.working)
        exp = "CoT, " + ("digest only" if k == 0 else "working every step" if k == 1 else f"working every {k} steps")
        if args.lr != 3e-3:
            exp += f", lr {args.lr:g}"
        return exp
    if args.init == "answer":
        return f"answer σ={args.sigma:g}" + (" (entry)" if args.noise == "entry" else "") + (f", {args.opt}" if args.opt != "adam" else "")
    if args.init == "constant":
        return "constant"
    exp = f"scratch w×{args.width:g}"
    if args.density != "none":
        exp += ", " + trace_mod.density_name(args.density) + (" + units" if args.trace_units else "")
    if args.lr != 3e-3:
        exp += f", lr {args.lr:g}"
    if args.schedule != "constant":
        exp += f", {args.schedule}"
    return exp


def main(argv):
    p = _parser()
    args = p.parse_args(argv)
    _check_args(p, args)
    torch.set_num_threads(args.threads)
    t0, c0 = time.time(), time.process_time()
    kind, cfg = inspect(args.config, args.max_params, args.max_tokens, args.width)
    if kind == "cot":
        from . import cot

        cot.check_args(p, args)
        args.cot = True
    base = os.path.splitext(os.path.basename(args.config))[0]
    if base.endswith(".cot"):
        base = base[:-len(".cot")]
    instance = args.instance or base
    exp = _experiment(args)
    name = _run_name(args, base)
    os.makedirs(args.out, exist_ok=True)
    lock = _lock(args.out, name)
    stem = os.path.join(args.out, name)
    for ext in (".json", ".csv", ".svg", ".ckpt"):  # a killed run's temporary files (this name is locked: none is being written)
        prefix = f".{name}{ext}.tmp-"
        for leftover in os.listdir(args.out):
            if leftover.startswith(prefix):
                os.unlink(os.path.join(args.out, leftover))
    if (args.skip_done or args.resume) and os.path.exists(stem + ".json"):
        try:
            before = json.loads(read_regular(stem + ".json", "run's JSON", 1 << 26))
        except ValueError:
            before = {}
        if before.get("status") == "done" and (not args.resume or before.get("stopped") == "exact" or before.get("steps_run", 0) >= args.steps
                                               or not os.path.exists(stem + ".ckpt")):
            print(f"{name}: done before ({stem}.json), skipped", file=sys.stderr)
            return 0
    config_sha = hashlib.sha256(read_regular(args.config, "config", 1 << 30)).hexdigest()
    settings = _settings(args, config_sha)
    ck = None
    if args.resume and os.path.exists(stem + ".ckpt"):
        ck = _load_ckpt(stem + ".ckpt")
        _check_resume(stem + ".ckpt", ck, settings)
        if ck["step"] > args.steps:
            raise FormatError(f"{stem}.ckpt: the checkpoint is at step {ck['step']}, past --steps {args.steps}")
    device = torch.device(args.device)
    if kind == "cot":
        job = cot.CoTJob(args, cfg, device)
    else:
        job = BitsJob(args, kind, cfg, load(args.config), device)
    if args.init_from and ck is None:
        src = _load_ckpt(args.init_from)
        n = copy_overlap(job.net, src["net"], args.init_from)
        print(f"init from {args.init_from} (run {src.get('name')!r} at step {src['step']}): {n} tensors copied where they overlap", file=sys.stderr)
    meta = {"instance": instance, "config": os.path.basename(args.config), "experiment": exp, "init": args.init, "sigma": args.sigma,
            "noise": args.noise, "width": args.width, "train": args.train, "heldout": args.heldout, "batch": args.batch, "lr": args.lr,
            "schedule": args.schedule,
            "opt": args.opt, "steps": args.steps, "seed": args.seed, "data_seed": args.data_seed, "device": args.device,
            "threads": args.threads, "architecture": kind if kind == "cot" else job.teacher.arch}
    meta.update(job.meta(cfg))
    if args.init_from:
        meta["init_from"] = os.path.basename(args.init_from)
    meta.update({"pid": os.getpid(), "status": "running"})

    rows, lines = [], []
    step, status, signum, loss_v, stopped = 0, "done", 0, float("nan"), None
    cpu0, wall0 = 0.0, 0.0
    opt = None if args.init == "constant" else (torch.optim.Adam if args.opt == "adam" else torch.optim.SGD)(job.net.parameters(), lr=args.lr)
    bgen = torch.Generator().manual_seed(args.seed + 104729)
    if ck is not None:
        job.net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        bgen.set_state(ck["bgen"])
        step, rows, lines, loss_v = ck["step"], list(ck["rows"]), list(ck["lines"]), ck["loss_v"]
        cpu0, wall0 = ck["cpu_s"], ck["elapsed_s"]
        meta["resumed"] = meta.get("resumed", []) + [step]
        print(f"{name}: resumed from {stem}.ckpt at step {step} ({len(rows)} rows, {cpu0:.1f} CPU s before)", file=sys.stderr)
    resumed_at = step if ck is not None else -1

    def save_ckpt():
        state = {"format": CKPT_FORMAT, "name": name, "settings": settings, "step": step, "rows": rows, "lines": lines, "loss_v": loss_v,
                 "net": job.net.state_dict(), "opt": opt.state_dict(), "bgen": bgen.get_state(),
                 "cpu_s": rows[-1]["cpu_s"], "elapsed_s": rows[-1]["elapsed_s"]}
        atomic_write(stem + ".ckpt", lambda fh: torch.save(state, fh))

    f = None
    try:
        # From here on the run's files exist: a signal marks them
        # "interrupted" (below) rather than leaving them "running".
        _write_json(stem + ".json", meta)
        f, w = _open_csv(stem + ".csv", lines)

        def log(step, loss):
            row = {"step": step}
            row.update(job.row(loss))
            row.update({"elapsed_s": wall0 + time.time() - t0, "cpu_s": cpu0 + time.process_time() - c0})
            line = [row["step"], f"{row['loss']:.6g}", f"{row['bit_acc']:.6f}", f"{row['var_bit_acc']:.6f}", f"{row['exact']:.6f}",
                    f"{row['train_exact']:.6f}", f"{row['elapsed_s']:.2f}", f"{row['cpu_s']:.2f}", f"{row['trace_mse']:.6g}",
                    f"{row['working_exact']:.6f}"]
            w.writerow(line)
            f.flush()  # one write a row: a kill leaves whole rows
            rows.append(row)
            lines.append(line)
            return row

        progress = Progress(args.steps, args.progress)
        if args.init == "constant":
            log(0, job.constant_loss())
        else:
            while True:
                if step != resumed_at and (step % args.log_every == 0 or step == args.steps):
                    r = log(step, loss_v)
                    progress.show(step, f"loss {loss_v:.4f} bits {r['bit_acc']:.4f} exact {r['exact']:.4f}")
                    if args.stop_exact and r["exact" if args.stop_on == "heldout" else "train_exact"] >= args.stop_at:
                        stopped = "exact"
                        break
                    if step == args.steps:
                        break
                    if args.checkpoint_every and step and step % args.checkpoint_every == 0:
                        save_ckpt()
                elif step == args.steps:
                    break
                if args.schedule == "cosine":
                    for g in opt.param_groups:
                        g["lr"] = args.lr * 0.5 * (1 + math.cos(math.pi * step / max(1, args.steps)))
                idx = torch.randint(0, job.ntrain, (args.batch,), generator=bgen)
                loss = job.batch_loss(idx)
                if not torch.isfinite(loss):
                    # The weights are about to become NaN: log what the
                    # model does now and stop (its JSON says "diverged").
                    loss_v = float(loss)
                    if rows[-1]["step"] != step:
                        log(step, loss_v)
                    stopped = "diverged"
                    break
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(job.net.parameters(), 1.0)
                opt.step()
                loss_v = float(loss)
                step += 1
            if args.checkpoint_every:
                save_ckpt()
        _block_signals()  # done: the files are finished whatever arrives now
        progress.done()
    except (KeyboardInterrupt, Signalled) as e:
        # python3 -m tcforge_torch's handler ignores further signals now:
        # the files below are finished whatever arrives.
        status, signum = "interrupted", getattr(e, "signum", 2)
        meta["signal"] = "SIGTERM" if signum == 15 else "SIGINT"
        print(file=sys.stderr)
    except BaseException as e:
        meta["status"], meta["error"] = "failed", f"{type(e).__name__}: {e}"
        _write_json(stem + ".json", meta)
        raise
    finally:
        if f is not None:
            f.close()
    meta["status"] = status
    meta["steps_run"] = rows[-1]["step"] if rows else 0
    if stopped:
        meta["stopped"] = stopped
    if rows:
        meta["final"] = rows[-1]
    meta["elapsed_s"], meta["cpu_s"] = wall0 + time.time() - t0, cpu0 + time.process_time() - c0
    _write_json(stem + ".json", meta)
    if args.plot:
        svg = _svg(rows, f"{instance}: {exp}, seed {args.seed}")
        atomic_write(stem + ".svg", lambda fh: fh.write(svg.encode()))
    last = rows[-1] if rows else {}
    what = "digest exact" if kind == "cot" else "exact"
    print(f"{name}: {status} at step {meta['steps_run']}: held-out bit accuracy {last.get('bit_acc', float('nan')):.4f} "
          f"(varying bits {last.get('var_bit_acc', float('nan')):.4f}), {what} {last.get('exact', float('nan')):.4f}"
          + (f", working exact {last['working_exact']:.4f}" if kind == "cot" and last else "") +
          f"; {len(rows)} rows in {stem}.csv; {meta['cpu_s']:.1f} CPU s", file=sys.stderr)
    lock.close()
    return 128 + signum if status == "interrupted" else 0


def _block_signals():
    """SIGTERM and SIGINT ignored from here on (the run's last writes)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
