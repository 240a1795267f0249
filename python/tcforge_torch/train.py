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

__all__ = ["Refused", "inspect", "main"]

# The CSV's columns: held-out figures at each log row, then times.
_COLUMNS = ["step", "heldout_loss", "bit_acc", "var_bit_acc", "exact", "train_exact", "elapsed_s", "cpu_s"]


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
    if T == 1 and all(not b.get("attention") and not b.get("layer") and b.get("ffn") for b in blocks):
        for i, b in enumerate(blocks):
            if b["ffn"].get("norm"):
                raise Refused(f"{config_path}: block {i}: an FFN with a norm; the harness trains the un-normed no-attention MLP")
        return "mlp", cfg
    raise Refused(f"{config_path}: {arch} ({T:,} tokens): the harness trains stock tokens-as-states models "
                  f"(every block an nn.TransformerEncoderLayer) and one-token no-attention MLPs, not this mapping's "
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


class MLPNet(torch.nn.Module):
    """The no-attention MLP: x = base + input bits' rows; per block
    x (+)= w_out (silu(w_gate x) ⊙ w_value x); logit k = scale·(x[dim_k] − t_k)."""

    def __init__(self, inputs, d, hidden, residual, dims, thresholds):
        super().__init__()
        self.embed = torch.nn.Linear(inputs, d)
        self.gate = torch.nn.ModuleList(torch.nn.Linear(d, h, bias=False) for h in hidden)
        self.value = torch.nn.ModuleList(torch.nn.Linear(d, h, bias=False) for h in hidden)
        self.out = torch.nn.ModuleList(torch.nn.Linear(h, d, bias=False) for h in hidden)
        self.residual = list(residual)
        self.register_buffer("dims", torch.as_tensor(dims, dtype=torch.long))
        self.threshold = torch.nn.Parameter(torch.as_tensor(thresholds, dtype=torch.float32).clone())
        self.scale = torch.nn.Parameter(torch.tensor(1.0))

    def activation_std(self, bits):
        """The standard deviation of x after the embedding and after each
        block, on the sample bits."""
        out = []
        with torch.no_grad():
            x = self.embed(bits)
            out.append(float(x.std()))
            for g, v, o, r in zip(self.gate, self.value, self.out, self.residual):
                z = o(torch.nn.functional.silu(g(x)) * v(x))
                x = x + z if r else z
                out.append(float(x.std()))
        return out

    def forward(self, bits):
        x = self.embed(bits)
        for g, v, o, r in zip(self.gate, self.value, self.out, self.residual):
            z = o(torch.nn.functional.silu(g(x)) * v(x))
            x = x + z if r else z
        return self.scale * (x[:, self.dims] - self.threshold)


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
            self.net = MLPNet(m.inputs, d, hidden, [b["ffn"]["residual"] for b in blocks], m.out_dim, m.out_threshold)
            self.shape = {"tokens": 1, "d_model": d, "blocks": len(blocks), "heads": 0, "ffn": max(hidden)}
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
        y = self.net(x)
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
    p.add_argument("config", help="an exported model's JSON config (tcforge run --export DIR)")
    p.add_argument("--out", default="out/learnability/runs", help="directory for NAME.csv, NAME.json, NAME.svg")
    p.add_argument("--name", help="run name (default: config name, experiment, seed)")
    p.add_argument("--instance", help="instance label for the table (default: the config's file name)")
    p.add_argument("--experiment", help="experiment label for the table (default: from --init, --width, --sigma)")
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
    p.add_argument("--train", type=int, default=4096, help="training inputs (a fixed set)")
    p.add_argument("--heldout", type=int, default=1024, help="held-out inputs, disjoint from the training set")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--stop-exact", type=int, default=1, help="stop once held-out exact rate is 1 at a log point (0: run the budget)")
    p.add_argument("--seed", type=int, default=0, help="initialisation, noise and batch order")
    p.add_argument("--data-seed", type=int, default=1, help="training and held-out inputs")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--max-params", type=int, default=50_000_000)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--skip-done", type=int, default=0, help="1: do nothing if OUT/NAME.json says the run is done (resuming a script)")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto")
    return p


def _evaluate(task, x, y, device, chunk=512):
    """(loss, per-bit accuracy [outputs], exact-output rate) on x, y."""
    tot_loss, right, exact, n = 0.0, torch.zeros(y.shape[1]), 0, x.shape[0]
    with torch.no_grad():
        for i in range(0, n, chunk):
            xi, yi = x[i:i + chunk].to(device), y[i:i + chunk].to(device)
            lg = task.logits(xi)
            tot_loss += float(torch.nn.functional.binary_cross_entropy_with_logits(lg, yi, reduction="sum"))
            ok = ((lg >= 0).to(torch.float32) == yi)
            right += ok.sum(0).cpu()
            exact += int(ok.all(1).sum())
    return tot_loss / (n * y.shape[1]), right / n, exact / n


def _check_args(p, args):
    """Refuses (usage error, exit 2) numbers that cannot make a run: a
    negative step budget never ends, a zero batch or log interval divides
    by zero, NaN or infinite rates and widths train nothing."""
    at_least = {"steps": 0, "batch": 1, "train": 1, "heldout": 1, "log_every": 1, "threads": 1, "max_params": 1, "max_tokens": 1,
                "seed": 0, "data_seed": 0}
    for key, lo in at_least.items():
        v = getattr(args, key)
        if not lo <= v <= 1 << 62:
            p.error(f"--{key.replace('_', '-')} must be an integer in [{lo}, 2^62], got {v}")
    for key in ("plot", "stop_exact", "skip_done"):
        if getattr(args, key) not in (0, 1):
            p.error(f"--{key.replace('_', '-')} must be 0 or 1, got {getattr(args, key)}")
    for key, positive in (("lr", True), ("width", True), ("sigma", False)):
        v = getattr(args, key)
        if not math.isfinite(v) or (v <= 0 if positive else v < 0):
            p.error(f"--{key} must be a finite number {'> 0' if positive else '>= 0'}, got {v}")
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


def _write_json(path, obj):
    atomic_write(path, lambda f: f.write((json.dumps(obj, indent=1) + "\n").encode()))


def _open_csv(path):
    """A new CSV with its header, in place of path's whole (a hidden
    temporary file renamed over it): rows are appended to it, one write
    each, so a run killed at any moment leaves whole rows."""
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
    f = open(tmp, "x", newline="")
    try:
        w = csv.writer(f)
        w.writerow(_COLUMNS)
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


def main(argv):
    p = _parser()
    args = p.parse_args(argv)
    _check_args(p, args)
    torch.set_num_threads(args.threads)
    t0, c0 = time.time(), time.process_time()
    kind, cfg = inspect(args.config, args.max_params, args.max_tokens, args.width)
    teacher = load(args.config)
    base = os.path.splitext(os.path.basename(args.config))[0]
    instance = args.instance or base
    exp = {"scratch": f"scratch w×{args.width:g}", "answer": f"answer σ={args.sigma:g}" + (" (entry)" if args.noise == "entry" else "") + (f", {args.opt}" if args.opt != "adam" else ""), "constant": "constant"}[args.init]
    exp = args.experiment or exp
    name = args.name or f"{base}.{args.init}" + (f"-w{args.width:g}" if args.init == "scratch" else "") + \
        (f"-s{args.sigma:g}" + ("e" if args.noise == "entry" else "") + ("-sgd" if args.opt == "sgd" else "") if args.init == "answer" else "") + f".seed{args.seed}"
    os.makedirs(args.out, exist_ok=True)
    lock = _lock(args.out, name)
    stem = os.path.join(args.out, name)
    for ext in (".json", ".csv", ".svg"):  # a killed run's temporary files (this name is locked: none is being written)
        prefix = f".{name}{ext}.tmp-"
        for leftover in os.listdir(args.out):
            if leftover.startswith(prefix):
                os.unlink(os.path.join(args.out, leftover))
    if args.skip_done and os.path.exists(stem + ".json"):
        try:
            done = json.loads(read_regular(stem + ".json", "run's JSON", 1 << 26)).get("status") == "done"
        except ValueError:
            done = False
        if done:
            print(f"{name}: done before ({stem}.json), skipped", file=sys.stderr)
            return 0
    print(f"teacher: {args.config} ({teacher.arch}, {teacher.inputs} input bits → {teacher.outputs} output bits): "
          f"the exported exact model; tcforge run --export writes only models verified bit for bit against the "
          f"layered circuit, itself verified against the construction's reference, so its outputs are the labels "
          f"({teacher.vectors_checked} test vectors of its config reproduced on loading)",
          file=sys.stderr)
    dgen = torch.Generator().manual_seed(args.data_seed)
    xtr, xte = make_data(teacher.inputs, args.train, args.heldout, dgen)
    ytr, yte = teach(teacher, xtr), teach(teacher, xte)
    varying = (ytr.min(0).values != ytr.max(0).values)
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 7919)
    task = Task(kind, cfg, teacher, args.width, "scratch" if args.init == "constant" else args.init, args.sigma, gen, args.noise)
    device = torch.device(args.device)
    task.net.to(device)
    task.flat = task.flat.to(device) if kind == "stock" else None
    ftr, fte = task.features(xtr), task.features(xte)
    meta = {"instance": instance, "config": os.path.basename(args.config), "architecture": teacher.arch, "kind": kind,
            "experiment": exp, "init": args.init, "sigma": args.sigma, "noise": args.noise, "width": args.width, "shape": task.shape,
            "compiled_shape": {"tokens": teacher.tokens, "d_model": teacher.d,
                               "blocks": len(cfg["blocks"]), "params": _dense_params(cfg)},
            "inputs": teacher.inputs, "outputs": teacher.outputs, "varying_outputs": int(varying.sum()),
            "train": args.train, "heldout": args.heldout, "batch": args.batch, "lr": args.lr, "opt": args.opt, "steps": args.steps,
            "seed": args.seed, "data_seed": args.data_seed, "device": args.device, "threads": args.threads,
            "teacher": "the exported exact model (verified against the construction's reference by tcforge run)",
            "pid": os.getpid(), "status": "running"}

    if kind == "mlp":
        # With PyTorch's default initialisation the signal of un-normed,
        # gated, non-residual blocks can vanish: record it.
        meta["init_activation_std"] = task.net.activation_std(ftr[:1024].to(device))

    rows = []
    step, status, signum = 0, "done", 0
    f = None
    try:
        # From here on the run's files exist: a signal marks them
        # "interrupted" (below) rather than leaving them "running".
        _write_json(stem + ".json", meta)
        f, w = _open_csv(stem + ".csv")

        def log(step, loss):
            if args.init != "constant":
                loss, acc, ex = _evaluate(task, fte, yte, device)
            if args.init == "constant":
                pred = (ytr.mean(0) >= 0.5).to(torch.float32)
                ok = (yte == pred)
                acc, ex = ok.to(torch.float32).mean(0), float(ok.all(1).to(torch.float32).mean())
            tr_ex = _train_exact(task, ftr, ytr, device) if args.init != "constant" else float("nan")
            row = {"step": step, "loss": loss, "bit_acc": float(acc.mean()),
                   "var_bit_acc": float(acc[varying].mean()) if bool(varying.any()) else 1.0, "exact": ex,
                   "train_exact": tr_ex, "elapsed_s": time.time() - t0, "cpu_s": time.process_time() - c0}
            w.writerow([row["step"], f"{row['loss']:.6g}", f"{row['bit_acc']:.6f}", f"{row['var_bit_acc']:.6f}",
                        f"{row['exact']:.6f}", f"{row['train_exact']:.6f}", f"{row['elapsed_s']:.2f}", f"{row['cpu_s']:.2f}"])
            f.flush()  # one write a row: a kill leaves whole rows
            rows.append(row)
            return row

        progress = Progress(args.steps, args.progress)
        if args.init == "constant":
            pr = ytr.mean(0).clamp(1e-6, 1 - 1e-6)
            loss = float(-(yte * pr.log() + (1 - yte) * (1 - pr).log()).mean())
            log(0, loss)
        else:
            opt = (torch.optim.Adam if args.opt == "adam" else torch.optim.SGD)(task.net.parameters(), lr=args.lr)
            bgen = torch.Generator().manual_seed(args.seed + 104729)
            loss_v = float("nan")
            while True:
                if step % args.log_every == 0 or step == args.steps:
                    r = log(step, loss_v)
                    progress.show(step, f"loss {loss_v:.4f} bits {r['bit_acc']:.4f} exact {r['exact']:.4f}")
                    if step == args.steps or (args.stop_exact and r["exact"] == 1.0):
                        break
                idx = torch.randint(0, ftr.shape[0], (args.batch,), generator=bgen)
                xb, yb = ftr[idx].to(device), ytr[idx].to(device)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(task.logits(xb), yb)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(task.net.parameters(), 1.0)
                opt.step()
                loss_v = float(loss)
                step += 1
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
    if rows:
        meta["final"] = rows[-1]
    meta["elapsed_s"], meta["cpu_s"] = time.time() - t0, time.process_time() - c0
    _write_json(stem + ".json", meta)
    if args.plot:
        svg = _svg(rows, f"{instance}: {exp}, seed {args.seed}")
        atomic_write(stem + ".svg", lambda fh: fh.write(svg.encode()))
    last = rows[-1] if rows else {}
    print(f"{name}: {status} at step {meta['steps_run']}: held-out bit accuracy {last.get('bit_acc', float('nan')):.4f} "
          f"(varying bits {last.get('var_bit_acc', float('nan')):.4f}), exact {last.get('exact', float('nan')):.4f}; "
          f"{len(rows)} rows in {stem}.csv; {meta['cpu_s']:.1f} CPU s", file=sys.stderr)
    lock.close()
    return 128 + signum if status == "interrupted" else 0


def _block_signals():
    """SIGTERM and SIGINT ignored from here on (the run's last writes)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _train_exact(task, x, y, device, n=1024):
    """Exact-output rate on (up to n of) the training inputs."""
    _, _, ex = _evaluate(task, x[:n], y[:n], device)
    return ex
