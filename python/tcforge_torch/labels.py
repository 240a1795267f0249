"""Labels of an exported model: which circuit value every residual
dimension, attention head and FFN unit holds or computes (docs/labels.md),
the model's hidden states per block decoded through them, and the reverse
lookup (which units hold a given circuit value).

    m = tcforge_torch.load("model.json")
    lab = tcforge_torch.labels.load_labels(m)           # model.labels.json
    for b, (vals, x) in enumerate(decode(m, lab, bits)):  # x: [n, len(vals)]
        ...
"""

import math
import os

import torch

from . import FormatError, read_json

FORMAT = "tcforge-labels"
VERSIONS = (1,)
KINDS = ("aux", "gate", "form", "partial")


class Labels:
    """A model's label table: values (residual dimensions), units (heads and
    FFN units), and the circuit's level widths and form counts."""

    def __init__(self, path, table):
        self.path = path
        self.levels = [int(n) for n in table["levels"]]
        self.forms = [int(n) for n in table["forms"]]
        self.values = table["values"]
        self.units = table["units"]
        self.blocks = int(table["blocks"])

    def at(self, boundary, circuit_only=True):
        """The value labels live at a block boundary (0: after the
        embedding, b: after b blocks), aux labels left out unless asked."""
        return [v for v in self.values if v["from"] <= boundary <= v["until"] and (not circuit_only or v["kind"] != "aux")]

    def find(self, text, boundary=None):
        """Value labels whose name contains text (at that boundary if given)."""
        vals = self.values if boundary is None else self.at(boundary, circuit_only=False)
        return [v for v in vals if text in v["name"]]

    def units_of(self, block, text="", kind=None):
        """Unit labels of a block (0-based) whose name contains text."""
        return [u for u in self.units if u["block"] == block and text in u["name"] and (kind is None or u["kind"] == kind)]

    def where(self, level, index, kind=None):
        """The reverse lookup: the value labels holding (a share of) value
        index of level (a gate, form or partial of it), each with its
        token, dim and boundaries."""
        return [v for v in self.values if v["kind"] != "aux" and v["level"] == level and v["index"] == index
                and (kind is None or v["kind"] == kind)]


def _fail(path, i, v, what):
    raise FormatError(f"{path}: value label {i} ({v.get('kind')} level {v.get('level')} index {v.get('index')}, {v.get('name', '')!r}): {what}")


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _num(x):
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) and math.isfinite(x)


def check(path, table, model):
    """Checks a label table against a loaded model (tcforge_torch.Model):
    format, version, shape, and every entry's token, dimension, boundaries,
    kind, level, index, sources and coefficients (integers where they
    index, finite numbers where they weigh); raises FormatError naming the
    table and entry."""
    if not isinstance(table, dict):
        raise FormatError(f"{path}: not a JSON object")
    if table.get("format") != FORMAT:
        raise FormatError(f"{path}: format {table.get('format')!r}, want {FORMAT!r}")
    if table.get("version") not in VERSIONS:
        raise FormatError(f"{path}: unknown version {table.get('version')!r} (this loader reads {', '.join(map(str, VERSIONS))})")
    nb = len(model.cfg["blocks"])
    for key, want in (("tokens", model.tokens), ("d_model", model.d), ("blocks", nb)):
        if table.get(key) != want:
            raise FormatError(f"{path}: {key} {table.get(key)!r}, the model has {want} (a label table of another model)")
    levels, forms = table.get("levels", []), table.get("forms", [])
    for key, v in (("levels", levels), ("forms", forms), ("values", table.get("values", [])), ("units", table.get("units", []))):
        if not isinstance(v, list):
            raise FormatError(f"{path}: {key} is {type(v).__name__}, want a list")
    for key, v in (("levels", levels), ("forms", forms)):
        for i, n in enumerate(v):
            if not _int(n) or n < 0:
                raise FormatError(f"{path}: {key}[{i}] is {n!r}, want a count")
    if len(levels) != len(forms):
        raise FormatError(f"{path}: {len(levels)} levels but {len(forms)} form counts")
    for i, v in enumerate(table.get("values", [])):
        if not isinstance(v, dict):
            raise FormatError(f"{path}: value label {i} is not a JSON object")
        for key in ("token", "dim", "from", "until") + (("level", "index") if v.get("kind") != "aux" else ()):
            if not _int(v.get(key)):
                _fail(path, i, v, f"{key} is {v.get(key)!r}, want an integer")
        if not -1 <= v["token"] < model.tokens:
            _fail(path, i, v, f"token {v['token']} outside 0..{model.tokens - 1}")
        if not 0 <= v["dim"] < model.d:
            _fail(path, i, v, f"dimension {v['dim']} outside 0..{model.d - 1}")
        if not 0 <= v["from"] <= v["until"] <= nb:
            _fail(path, i, v, f"boundaries {v['from']}..{v['until']} outside 0..{nb}")
        if v.get("kind") not in KINDS:
            _fail(path, i, v, f"unknown kind {v.get('kind')!r}")
        if v["kind"] == "aux":
            continue
        L = v["level"]
        if not 0 <= L < len(levels):
            _fail(path, i, v, f"unknown level {L} (the circuit has levels 0..{len(levels) - 1})")
        n = forms[L] if v["kind"] == "form" else levels[L]
        if v["kind"] != "partial" and not 0 <= v["index"] < n:
            _fail(path, i, v, f"{v['kind']} {v['index']} outside level {L}'s {n}")
        src, coef = v.get("src", []), v.get("coef", [])
        if not isinstance(src, list) or not isinstance(coef, list):
            _fail(path, i, v, "src and coef must be lists")
        if len(src) != len(coef):
            _fail(path, i, v, f"{len(src)} sources but {len(coef)} coefficients")
        for j, (sj, cj) in enumerate(zip(src, coef)):
            if not _int(sj):
                _fail(path, i, v, f"src[{j}] is {sj!r}, want an integer")
            if not _num(cj):
                _fail(path, i, v, f"coef[{j}] is {cj!r}, want a finite number")
        if "const" in v and not _num(v["const"]):
            _fail(path, i, v, f"const is {v['const']!r}, want a finite number")
        if any(not 0 <= s < levels[L] for s in src):
            _fail(path, i, v, f"a term's gate outside level {L}'s {levels[L]}")
    for i, u in enumerate(table.get("units", [])):
        if not isinstance(u, dict) or not _int(u.get("block")) or not _int(u.get("index")):
            raise FormatError(f"{path}: unit label {i}: want an object with integer block and index")
        if not 0 <= u["block"] < nb or u["kind"] not in ("ffn", "head"):
            raise FormatError(f"{path}: unit label {i} ({u.get('kind')} {u.get('index')} of block {u.get('block')}): block or kind unknown")


def load_labels(model, path=None):
    """Reads and checks the label table of a loaded model: path, else the
    export's NAME.labels.json beside the config NAME.json."""
    if path is None:
        path = model.path[:-len(".json")] + ".labels.json" if model.path.endswith(".json") else model.path + ".labels.json"
    table = read_json(path, "label table", 1 << 32)
    try:
        check(path, table, model)
    except (KeyError, TypeError) as e:
        raise FormatError(f"{path}: malformed label table: {e!r}") from None
    return Labels(path, table)


def stock_layer_units(layer, x):
    """A norm-first nn.TransformerEncoderLayer (no mask, no dropout) on x,
    returning (its output, its FFN's hidden units after the activation):
    the layer's own computation, spelt out to expose the units."""
    x = x + layer._sa_block(layer.norm1(x), None, None)
    u = layer.activation(layer.linear1(layer.norm2(x)))
    return x + layer.linear2(u), u


def hidden_states(model, bits, ablate=(), units=None):
    """Yields the residual stream [n, tokens, d_model] of input bits (0/1,
    [n, inputs]) at every block boundary: after the embedding, then after
    each block. ablate lists (block, unit) FFN units to silence (their
    output column zeroed). units, if a list, gets each block's FFN hidden
    units [n, tokens, F] (after the activation; a no-attention model's
    silu(gate)·value) appended before the block's boundary is yielded."""
    bits = torch.as_tensor(bits).reshape(-1, model.inputs).to(torch.float32)
    ablate = set(ablate)
    with torch.no_grad():
        if model.stock:
            if not hasattr(model, "_modules"):
                model._modules = (model.input_linear(), model.encoder(), model.readout_linear())
            embed, enc, _ = model._modules
            x = embed(model.token_bits(bits)) + model.pos
            yield x
            for b, layer in enumerate(enc.layers):
                cut = [u for (bb, u) in ablate if bb == b]
                if cut:
                    w = layer.linear2.weight.detach().clone()
                    layer.linear2.weight[:, cut] = 0
                if units is None:
                    x = layer(x)
                else:
                    x, u = stock_layer_units(layer, x)
                    units.append(u)
                if cut:
                    layer.linear2.weight.copy_(w)
                yield x
            return
        n, T, d = bits.shape[0], model.tokens, model.d
        x = model.base.unsqueeze(0).repeat(n, 1, 1)
        for i in range(model.inputs):
            x[:, model.input_token[i], :] += bits[:, i:i + 1] * model.input[i]
        yield x
        for b, blk in enumerate(model.cfg["blocks"]):
            if blk.get("attention"):
                a = blk["attention"]
                y = torch.stack([model._attention(a, xi) for xi in model._apply_norm(a.get("norm"), x)])
                x = x + y if a["residual"] else y
            if blk.get("ffn"):
                f = blk["ffn"]
                h = model._apply_norm(f.get("norm"), x).reshape(n * T, d)
                g = torch.nn.functional.silu(model._mm(model.W[f["w_gate"]], h)) * model._mm(model.W[f["w_value"]], h)
                for (bb, u) in ablate:
                    if bb == b:
                        g[:, u] = 0
                if units is not None:
                    units.append(g.reshape(n, T, -1))
                y = model._mm(model.W[f["w_out"]], g).reshape(n, T, d)
                x = x + y if f["residual"] else y
            yield x


def decode(model, labels, bits, ablate=()):
    """The hidden states decoded to circuit values: for every boundary b,
    (the value labels live at b, tensor [n, k] of the values they hold)."""
    out = []
    for b, x in enumerate(hidden_states(model, bits, ablate)):
        vals = labels.at(b)
        tok = torch.tensor([max(v["token"], 0) for v in vals], dtype=torch.long)
        dim = torch.tensor([v["dim"] for v in vals], dtype=torch.long)
        out.append((vals, x[:, tok, dim] if vals else torch.zeros(x.shape[0], 0)))
    return out


def circuit_value(label, gates, forms):
    """The circuit value a label names, given one input's gate values and
    forms per level (lists of ints)."""
    L = label["level"]
    if label["kind"] == "gate":
        return gates[L][label["index"]]
    if label["kind"] == "form":
        return forms[L][label["index"]]
    return label.get("const", 0) + sum(c * gates[L][s] for s, c in zip(label.get("src", []), label.get("coef", [])))


def unit_activations(model, bits, block):
    """The FFN hidden units' activations [n, tokens, units] of a block
    (0-based) on input bits: relu(linear1 …) of a stock layer, SiLU(gate)
    ⊙ value of a SwiGLU FFN."""
    bits = torch.as_tensor(bits).reshape(-1, model.inputs).to(torch.float32)
    x = None
    for b, x in enumerate(hidden_states(model, bits)):
        if b == block:
            break
    with torch.no_grad():
        if model.stock:
            layer = model._modules[1].layers[block]
            h = x + layer._sa_block(layer.norm1(x), None, None)
            return torch.relu(layer.linear1(layer.norm2(h)))
        blk = model.cfg["blocks"][block]
        if blk.get("attention"):
            a = blk["attention"]
            y = torch.stack([model._attention(a, xi) for xi in model._apply_norm(a.get("norm"), x)])
            x = x + y if a["residual"] else y
        f = blk["ffn"]
        n, T, d = x.shape
        h = model._apply_norm(f.get("norm"), x).reshape(n * T, d)
        g = torch.nn.functional.silu(model._mm(model.W[f["w_gate"]], h)) * model._mm(model.W[f["w_value"]], h)
        return g.reshape(n, T, -1)


def run_ablated(model, bits, ablate):
    """The model's output bits (uint8 [n, outputs]) with the FFN units
    ablate = [(block, unit), …] silenced."""
    x = None
    for x in hidden_states(model, bits, ablate):
        pass
    if model.stock:
        return model.output_bits(model._modules[2](x) >= 0)
    return (x[:, model.out_token, model.out_dim] >= model.out_threshold).to(torch.uint8)


def writers(model, block, dim):
    """The FFN units of a block (0-based) whose output column writes
    residual dimension dim (linear2 / w_out row dim)."""
    blk = model.cfg["blocks"][block]
    name = blk["layer"]["tensors"]["linear2.weight"] if model.stock else blk["ffn"]["w_out"]
    w = model._dense(model.W[name])
    return [int(u) for u in (w[dim] != 0).nonzero().flatten()]
