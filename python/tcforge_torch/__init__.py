"""Load a tcforge model export (safetensors + JSON config) into PyTorch.

The format is documented in docs/export.md of the tcforge repository. A
model maps input bits to output bits:

    x = base; x[input_token[b]] += input[b] for every input bit b = 1
    per block: x = x + Attn(Norm(x))   (x = Attn(Norm(x)) without residual)
               x = x + FFN(Norm(x))
    bit k = x[readout.token[k], readout.dim[k]] >= readout.threshold[k]

Only torch is needed; the safetensors file is parsed here.
"""

import argparse
import json
import math
import os
import signal
import stat
import struct
import sys
import warnings


def _stop_at_once(signum, frame):
    """SIGTERM or SIGINT while python3 -m tcforge_torch still imports
    (torch takes seconds): nothing is written yet, so it ends at once, in
    the one line its main's handler prints later."""
    sys.stderr.write(f"tcforge_torch: ERROR: stopped by {signal.Signals(signum).name}\n")
    os._exit(128 + signum)


if __name__ == "tcforge_torch" and sys.argv[:1] == ["-m"]:
    for _s in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(_s) is not signal.SIG_IGN:  # a background job's SIGINT stays ignored
            signal.signal(_s, _stop_at_once)

import torch  # noqa: E402 (after the handlers: importing it takes seconds)

__all__ = ["FormatError", "Model", "load", "bytes_to_bits", "bits_to_bytes", "read_regular", "read_json", "atomic_write", "Signalled", "UsageError", "ArgumentParser"]

FORMAT = "tcforge-model"
VERSIONS = (1,)
LAYOUTS = ("csr", "dense")
_DTYPES = {"F32": (torch.float32, 4), "I32": (torch.int32, 4)}

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


# How the constructions tcforge ships map bytes to bits
# (internal/safetensors/describe.go's bitLayout): a config of one of them
# must say the same. Another construction's may say any of BIT_ORDERS.
BIT_ORDER = {"keccak": "lsb-first", "sha2": "msb-first"}
BIT_ORDERS = ("lsb-first", "msb-first", "bits")
PADDINGS = ("model", "caller", "none", "")

# Keccak presets (plugins/keccak): capacity in bits, at w = 64.
KECCAK_CAPACITY = {"sha3-224": 448, "sha3-256": 512, "sha3-384": 768, "sha3-512": 1024,
                   "shake128": 256, "shake256": 512, "keccak-256": 512}
# SHA-2 presets (plugins/sha2): word size and digest bits.
SHA2_PRESETS = {"sha224": (32, 224), "sha256": (32, 256), "sha384": (64, 384), "sha512": (64, 512),
                "sha512-224": (64, 224), "sha512-256": (64, 256)}

# A LayerNorm or RMSNorm epsilon above this is not a small guard against
# division by zero but a change of the function (tcforge writes 1e-5 and
# 1e-6).
MAX_EPS = 1e-2


class FormatError(ValueError):
    """A malformed export: the message names the file and the tensor."""


class UsageError(Exception):
    """A command line that cannot run (python3 -m tcforge_torch: exit 2)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose errors raise UsageError (one line, exit 2,
    from python3 -m tcforge_torch's main) rather than print the usage."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message} (--help prints the usage)")


class Signalled(BaseException):
    """SIGTERM or SIGINT arrived (python3 -m tcforge_torch's handler):
    unwinds the command, whose finally blocks remove or mark what it was
    writing, to main, which exits 128 + the signal."""

    def __init__(self, signum):
        import signal

        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def read_regular(path, what="file", limit=1 << 40, binary=True):
    """The contents of path, a regular file of at most limit bytes; a FIFO,
    a device or a directory is refused (FormatError) without blocking on
    it (opened non-blocking, checked, then read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FormatError(f"{path}: cannot open the {what}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FormatError(f"{path}: the {what} is not a regular file")
        if st.st_size > limit:
            raise FormatError(f"{path}: the {what} is {st.st_size:,} bytes, over the limit of {limit:,}")
        data = f.read(st.st_size)  # what fstat saw: a file growing under the reader is not read past it
    return data if binary else data.decode("utf-8", errors="replace")


def atomic_write(path, write):
    """Writes path whole or not at all: write(f) fills a hidden temporary
    file beside it (.NAME.tmp-PID, a binary file object), which is synced
    and renamed over path; on any error or signal the temporary file is
    removed and path is left as it was."""
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "xb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _read_safetensors(path):
    """Returns {name: (dtype, shape, raw bytes)} and the metadata."""
    data = read_regular(path, "safetensors file")
    if len(data) < 8:
        raise FormatError(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise FormatError(f"{path}: header of {n} bytes runs past the end of the file")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise FormatError(f"{path}: header is not JSON: {e}") from None
    body = memoryview(data)[8 + n:]
    if not isinstance(header, dict):
        raise FormatError(f"{path}: header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict):
        raise FormatError(f"{path}: __metadata__ is not a JSON object")
    out, spans = {}, []
    for name, h in header.items():
        try:
            dt, shape, (a, b) = h["dtype"], [int(s) for s in h["shape"]], h["data_offsets"]
            if not (isinstance(a, int) and isinstance(b, int)) or any(x < 0 for x in shape):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise FormatError(f"{path}: tensor {name!r}: bad header entry {h!r}") from None
        if dt not in _DTYPES:
            raise FormatError(f"{path}: tensor {name!r}: dtype {dt}, want F32 or I32")
        count = 1
        for s in shape:
            count *= s
        if not (0 <= a <= b <= len(body)) or b - a != count * _DTYPES[dt][1]:
            raise FormatError(f"{path}: tensor {name!r}: data offsets [{a}, {b}) do not fit shape {shape} of {dt} in {len(body)} bytes")
        out[name] = (dt, shape, body[a:b])
        spans.append((a, b, name))
    spans.sort()
    for (a0, b0, n0), (a1, b1, n1) in zip(spans, spans[1:]):
        if a1 < b0:
            raise FormatError(f"{path}: tensors {n0!r} [{a0}, {b0}) and {n1!r} [{a1}, {b1}) overlap")
    return out, meta


def _tensor(path, raw, name, dtype, shape):
    """Returns tensor name of raw, checking its dtype and shape."""
    if name not in raw:
        raise FormatError(f"{path}: tensor {name!r} is missing")
    dt, sh, buf = raw[name]
    if dt != dtype or sh != list(shape):
        raise FormatError(f"{path}: tensor {name!r}: {dt} {sh}, want {dtype} {list(shape)}")
    t = torch.frombuffer(bytearray(buf), dtype=_DTYPES[dt][0]) if len(buf) else torch.empty(0, dtype=_DTYPES[dt][0])
    if t.dtype.is_floating_point and not bool(torch.isfinite(t).all()):
        raise FormatError(f"{path}: tensor {name!r}: {int((~torch.isfinite(t)).sum())} NaN or infinite values")
    return t.reshape(shape)


def _weights_path(config_path, name):
    """The safetensors file a config names: a file in the config's own
    directory (no path separators, no link leading out of it)."""
    if not isinstance(name, str) or not name or name in (".", "..") or os.path.basename(name) != name or "\\" in name:
        raise FormatError(f"{config_path}: \"weights\" is {name!r}: want a file name in the config's directory")
    folder = os.path.dirname(os.path.abspath(config_path))
    path = os.path.join(folder, name)
    if os.path.dirname(os.path.realpath(path)) != os.path.realpath(folder):
        raise FormatError(f"{config_path}: \"weights\" {name!r} leads out of the config's directory (to {os.path.realpath(path)})")
    return path


def _want(config_path, obj, key, kind, where="config"):
    """obj[key], checked to be of kind (a type or tuple of types)."""
    if not isinstance(obj, dict):
        raise FormatError(f"{config_path}: {where} is not a JSON object")
    if key not in obj:
        raise FormatError(f"{config_path}: {where} has no {key!r}")
    v = obj[key]
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise FormatError(f"{config_path}: {where}[{key!r}] is {type(v).__name__} {v!r:.60}, want {names}")
    return v


def _index_list(config_path, obj, key, bound, where):
    """obj[key]: a list of ints in [0, bound)."""
    v = _want(config_path, obj, key, list, where)
    for i, x in enumerate(v):
        if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < bound:
            raise FormatError(f"{config_path}: {where}.{key}[{i}] is {x!r}, want an index in [0, {bound})")
    return v


def read_json(path, what="config", limit=1 << 30):
    """The JSON document of path, a regular file of at most limit bytes
    (read_regular); FormatError where it is not one or not JSON."""
    try:
        return json.loads(read_regular(path, what, limit))
    except ValueError as e:
        if isinstance(e, FormatError):
            raise
        raise FormatError(f"{path}: not JSON: {e}") from None


def _config(config_path):
    """The parsed JSON config, its format, version and layout checked."""
    cfg = read_json(config_path)
    if not isinstance(cfg, dict):
        raise FormatError(f"{config_path}: the config is not a JSON object")
    if cfg.get("format") != FORMAT:
        raise FormatError(f"{config_path}: format {cfg.get('format')!r}, want {FORMAT!r}")
    if cfg.get("version") not in VERSIONS:
        raise FormatError(f"{config_path}: unknown format version {cfg.get('version')!r} (this loader reads {', '.join(map(str, VERSIONS))})")
    if cfg.get("layout") not in LAYOUTS:
        raise FormatError(f"{config_path}: unknown layout {cfg.get('layout')!r}")
    return cfg


def _build_checked(model, config_path, cfg, check):
    """Reads the weights the config names and builds model from them
    (model._build), any malformed entry a FormatError naming the config;
    then, unless check is false, model.check_vectors() (vectors_checked:
    how many ran)."""
    weights = _weights_path(config_path, cfg.get("weights"))
    raw, meta = _read_safetensors(weights)
    try:
        _check_computes(config_path, cfg.get("computes"))
        model._build(config_path, cfg, weights, raw, meta)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        if isinstance(e, FormatError):
            raise
        raise FormatError(f"{config_path}: malformed config ({type(e).__name__}: {e})") from None
    model.vectors_checked = 0
    if check:
        model.vectors_checked = model.check_vectors()


def _matrices(config_path, cfg, weights, raw, meta):
    """{name: matrix} of every tensor the config lists (CSR, or dense as
    stored; a mostly-zero dense matrix computed sparse)."""
    if meta.get("format", FORMAT) != FORMAT:
        raise FormatError(f"{weights}: metadata format {meta.get('format')!r}, want {FORMAT!r}")
    W = {}
    for name, sh in cfg["tensors"].items():
        rows, cols, nnz = (_want(config_path, sh, k, int, f"tensors[{name!r}]") for k in ("rows", "cols", "nnz"))
        if min(rows, cols, nnz) < 0:
            raise FormatError(f"{config_path}: tensors[{name!r}]: negative rows, cols or nnz")
        if cfg["layout"] == "dense":
            w = _tensor(weights, raw, name, "F32", (rows, cols))
            if rows * cols > 4096 and 4 * int((w != 0).sum()) < rows * cols:
                w = w.to_sparse_csr()  # stored dense, computed sparse
            W[name] = w
            continue
        crow = _tensor(weights, raw, name + ".crow_indices", "I32", (rows + 1,))
        col = _tensor(weights, raw, name + ".col_indices", "I32", (nnz,))
        val = _tensor(weights, raw, name + ".values", "F32", (nnz,))
        if rows + 1 > 0 and (int(crow[0]) != 0 or int(crow[-1]) != nnz or bool((crow[1:] < crow[:-1]).any())):
            raise FormatError(f"{weights}: tensor {name + '.crow_indices'!r}: not a row pointer over {nnz} entries")
        if nnz and (int(col.min()) < 0 or int(col.max()) >= cols):
            raise FormatError(f"{weights}: tensor {name + '.col_indices'!r}: column outside [0, {cols})")
        W[name] = torch.sparse_csr_tensor(crow, col, val, size=(rows, cols))
    return W


def _needer(config_path, W):
    """need(name, rows, cols): matrix name of W, checked to be listed and
    of that shape (None: any)."""

    def need(name, rows=None, cols=None):
        if name not in W:
            raise FormatError(f"{config_path}: tensor {name!r} is used but not listed in \"tensors\"")
        r, c = W[name].shape
        if (rows is not None and r != rows) or (cols is not None and c != cols):
            raise FormatError(f"{config_path}: tensor {name!r} is {r}×{c}, want {rows if rows is not None else r}×{cols if cols is not None else c}")
        return W[name]

    return need


def _dense(w):
    return w.to_dense() if w.layout != torch.strided else w


# Stock layers: the state-dict suffixes of a torch.nn.TransformerEncoderLayer
# (vectors stored [1, n] in the file, flat in PyTorch).
_VECTORS = ("norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "self_attn.in_proj_bias",
            "self_attn.out_proj.bias", "linear1.bias", "linear2.bias")


def _check_layer(path, i, layer, need, d, F=None):
    """Checks block i's stock layer (its "layer" entry): the twelve tensors
    of shapes a TransformerEncoderLayer(d, nhead, F) has, F its linear1's
    rows unless given; returns F."""
    tensors = layer["tensors"]
    if F is None:
        F = need(tensors["linear1.weight"], None, d).shape[0] if "linear1.weight" in tensors else 0
    shapes = {"norm1.weight": [d], "norm1.bias": [d], "self_attn.in_proj_weight": [3 * d, d],
              "self_attn.in_proj_bias": [3 * d], "self_attn.out_proj.weight": [d, d], "self_attn.out_proj.bias": [d],
              "norm2.weight": [d], "norm2.bias": [d], "linear1.weight": [F, d], "linear1.bias": [F],
              "linear2.weight": [d, F], "linear2.bias": [d]}
    if set(tensors) != set(shapes):
        raise FormatError(f"{path}: layer {i}: tensors {sorted(tensors)}, a stock layer has {sorted(shapes)}")
    for suffix, name in tensors.items():
        w = need(name)
        got = [w.shape[1]] if suffix in _VECTORS and w.shape[0] == 1 else list(w.shape)
        if got != shapes[suffix]:
            raise FormatError(f"{path}: layer {i}: {suffix} (tensor {name!r}) is {list(w.shape)}, a stock layer wants {shapes[suffix]}")
    return F


def _layer_state(need, layer, prefix):
    """A stock layer's state-dict entries, keys prefix + suffix, float32."""
    sd = {}
    for suffix, name in layer["tensors"].items():
        w = _dense(need(name)).to(torch.float32)
        sd[prefix + suffix] = w.reshape(-1) if suffix in _VECTORS else w
    return sd


# The query rows _emulated_layer scores at once.
QUERY_BLOCK = 512


def _emulated_layer(x, p, nhead, eps, r, mask=None):
    """One stock encoder layer (norm_first, relu) on x [n, T, d] in a
    format PyTorch 1.13's CPU kernels lack (float16): the layer's
    equations (docs/export.md) with p(suffix) its rounded weights and the
    result of every step (each product, sum, LayerNorm, softmax, relu)
    rounded by r, each computed in float32; mask (bool [T, T], True where
    a query may not attend) for a causal decoder."""
    n, T, d = x.shape
    e = d // nhead
    ln = torch.nn.functional.layer_norm
    y = r(ln(x, (d,), p("norm1.weight"), p("norm1.bias"), eps))
    qkv = r(r(y @ p("self_attn.in_proj_weight").T) + p("self_attn.in_proj_bias"))
    q, k, v = (qkv[..., j * d:(j + 1) * d].reshape(n, T, nhead, e).transpose(1, 2) for j in range(3))
    q = r(q / e ** 0.5)  # nn.MultiheadAttention scales the queries first
    o = torch.empty_like(q)
    for a in range(0, T, QUERY_BLOCK):  # query rows a block at a time: the scores of long contexts
        s = r(q[:, :, a:a + QUERY_BLOCK] @ k.transpose(-2, -1))
        if mask is not None:
            s = s.masked_fill(mask[a:a + QUERY_BLOCK], float("-inf"))
        o[:, :, a:a + QUERY_BLOCK] = r(r(torch.softmax(s, dim=-1)) @ v)
    o = o.transpose(1, 2).reshape(n, T, d)
    x = r(x + r(r(o @ p("self_attn.out_proj.weight").T) + p("self_attn.out_proj.bias")))
    y = r(ln(x, (d,), p("norm2.weight"), p("norm2.bias"), eps))
    h = r(torch.relu(r(r(y @ p("linear1.weight").T) + p("linear1.bias"))))
    return r(x + r(r(h @ p("linear2.weight").T) + p("linear2.bias")))


class Model:
    """A loaded model: run(bits) computes its output bits."""

    def __init__(self, config_path, check=True, cfg=None):
        self.path = config_path
        cfg = cfg if cfg is not None else _config(config_path)
        self.cfg = cfg
        self._typed, self._stock_modules = {}, {}
        self.arch = cfg.get("architecture", "")
        self.tokens, self.d = _want(config_path, cfg, "tokens", int), _want(config_path, cfg, "d_model", int)
        if self.tokens < 1 or self.d < 1:
            raise FormatError(f"{config_path}: tokens {self.tokens} and d_model {self.d}: want both at least 1")
        for key, kind in (("embedding", dict), ("blocks", list), ("readout", dict), ("tensors", dict)):
            _want(config_path, cfg, key, kind)
        _build_checked(self, config_path, cfg, check)

    def test_vectors(self):
        """The config's test vectors as (inputs uint8 [k, inputs], outputs
        uint8 [k, outputs]), each checked to be bit strings of the model's
        widths (k = 0 where the config has none)."""
        vecs = self.cfg.get("test_vectors") or []
        if not isinstance(vecs, list):
            raise FormatError(f"{self.path}: test_vectors is {type(vecs).__name__}, want a list")
        ins, outs = [], []
        for i, v in enumerate(vecs):
            if not isinstance(v, dict) or not isinstance(v.get("input"), str) or not isinstance(v.get("output"), str):
                raise FormatError(f"{self.path}: test vector {i + 1}: want {{\"input\": bits, \"output\": bits}}")
            for key, n in (("input", self.inputs), ("output", self.outputs)):
                if len(v[key]) != n or set(v[key]) - {"0", "1"}:
                    raise FormatError(f"{self.path}: test vector {i + 1}: {key} is not {n} characters of 0/1")
            ins.append([int(c) for c in v["input"]])
            outs.append([int(c) for c in v["output"]])
        k = len(ins)
        return (torch.tensor(ins, dtype=torch.uint8).reshape(k, self.inputs),
                torch.tensor(outs, dtype=torch.uint8).reshape(k, self.outputs))

    def check_vectors(self):
        """Runs the config's test vectors (float32) and raises FormatError
        naming the first that the model does not reproduce: weights or
        hyper-parameters edited after the export (a weight, an epsilon)
        compute another function, and the vectors, written by tcforge run
        from its verification samples, say so. Returns how many ran."""
        ins, want = self.test_vectors()
        if len(ins):
            got = self.run(ins)
            bad = (got != want).any(dim=1).nonzero().flatten().tolist()
            if bad:
                i = bad[0]
                k = int((got[i] != want[i]).nonzero()[0])
                raise FormatError(f"{self.path}: test vector {i + 1} of {len(ins)}: output bit {k} is {int(got[i, k])}, the config says "
                                  f"{int(want[i, k])} ({len(bad)} of {len(ins)} vectors differ): the model does not compute what its "
                                  f"config says (weights or settings edited after the export?); refused")
        return len(ins)

    def _build(self, config_path, cfg, weights, raw, meta):
        """The tensors, embedding, blocks and readout of a parsed config."""
        self.W = _matrices(config_path, cfg, weights, raw, meta)
        self.need = need = _needer(config_path, self.W)
        emb = cfg["embedding"]
        self.inputs = len(_index_list(config_path, emb, "input_token", self.tokens, "embedding"))
        self.base = self._dense(need(emb["base"], self.tokens, self.d))
        self.input = self._dense(need(emb["input"], self.inputs, self.d))
        self.input_token = torch.tensor(emb["input_token"], dtype=torch.long)
        self.stock = bool(cfg["blocks"]) and all(blk.get("layer") for blk in cfg["blocks"])
        if not self.stock and any(blk.get("layer") for blk in cfg["blocks"]):
            raise FormatError(f"{config_path}: stock encoder layers mixed with other blocks")
        for blk in cfg["blocks"]:
            if blk.get("attention"):
                a = blk["attention"]
                if a["mode"] not in ("hard", "softmax"):
                    raise FormatError(f"{config_path}: unknown attention mode {a['mode']!r}")
                for h in a["heads"]:
                    q, k = need(h["q"], None, self.d), need(h["k"], None, self.d)
                    v, o = need(h["v"], None, self.d), need(h["o"], self.d, None)
                    if q.shape[0] != k.shape[0] or o.shape[1] != v.shape[0]:
                        raise FormatError(f"{config_path}: head {h}: q/k or v/o shapes do not compose")
                self._norm(a.get("norm"))
            if blk.get("ffn"):
                f = blk["ffn"]
                g, v = need(f["w_gate"], None, self.d), need(f["w_value"], None, self.d)
                need(f["w_out"], self.d, g.shape[0])
                if v.shape[0] != g.shape[0]:
                    raise FormatError(f"{config_path}: tensor {f['w_value']!r} has {v.shape[0]} rows, {f['w_gate']!r} {g.shape[0]}")
                self._norm(f.get("norm"))
        r = cfg["readout"]
        self.out_token = torch.tensor(_index_list(config_path, r, "token", self.tokens, "readout"), dtype=torch.long)
        self.out_dim = torch.tensor(_index_list(config_path, r, "dim", self.d, "readout"), dtype=torch.long)
        thr = _want(config_path, r, "threshold", list, "readout")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in thr):
            raise FormatError(f"{config_path}: readout.threshold holds a value that is not a number")
        self.out_threshold = torch.tensor(thr, dtype=torch.float32)
        if not (len(self.out_token) == len(self.out_dim) == len(self.out_threshold)):
            raise FormatError(f"{config_path}: readout has {len(self.out_token)} tokens, {len(self.out_dim)} dims and {len(self.out_threshold)} thresholds: want one of each per output bit")
        if not bool(torch.isfinite(self.out_threshold).all()):
            raise FormatError(f"{config_path}: readout.threshold holds NaN or infinite values")
        self.outputs = len(self.out_token)
        if self.stock:
            self._check_stock()

    # Stock models: every block a torch.nn.TransformerEncoderLayer.

    def _check_stock(self):
        layers = [blk["layer"] for blk in self.cfg["blocks"]]
        self.layers = len(layers)
        self.nhead = _want(self.path, layers[0], "nhead", int, "blocks[0].layer")
        self.eps = _eps(self.path, layers[0].get("layer_norm_eps"), "blocks[0].layer.layer_norm_eps", False)
        self.ffn = self.need(layers[0]["tensors"]["linear1.weight"], None, self.d).shape[0]
        if self.nhead < 1 or self.d % self.nhead:
            raise FormatError(f"{self.path}: nhead {self.nhead} does not divide d_model {self.d}")
        for i, l in enumerate(layers):
            if l.get("nhead") != self.nhead or l.get("layer_norm_eps") != layers[0].get("layer_norm_eps"):
                raise FormatError(f"{self.path}: layer {i}: nhead/eps differ from layer 0 (a stock encoder repeats one layer)")
        st = self.cfg.get("stock")
        if st is not None:
            want = {"num_layers": self.layers, "nhead": self.nhead, "dim_feedforward": self.ffn, "layer_norm_eps": self.eps}
            got = {k: st.get(k) for k in want} if isinstance(st, dict) else st
            if got != want:
                raise FormatError(f"{self.path}: \"stock\" says {got}, the layers {want}")
        for i, l in enumerate(layers):
            _check_layer(self.path, i, l, self.need, self.d, self.ffn)
        # Input map and readout as shared nn.Linear over each token's bits.
        self.in_index = self._per_token(self.input_token.tolist(), self.inputs)
        self.out_index = self._per_token(self.out_token.tolist(), self.outputs)
        self.in_weight = self._shared_columns(self.in_index, lambda b: self.input[b], "input map")
        self.out_weight = self._shared_columns(self.out_index, lambda k: torch.cat([
            torch.nn.functional.one_hot(self.out_dim[k], self.d).to(torch.float32), -self.out_threshold[k:k + 1]]), "readout")

    def _per_token(self, tokens, n):
        """[T, k] long: item j of token t (its j-th input or output), -1 if none."""
        per = [[] for _ in range(self.tokens)]
        for i in range(n):
            per[tokens[i]].append(i)
        k = max((len(p) for p in per), default=0)
        return torch.tensor([p + [-1] * (k - len(p)) for p in per], dtype=torch.long).reshape(self.tokens, k)

    def _shared_columns(self, index, column, what):
        """The matrix whose column j serves item j of every token."""
        cols = []
        for j in range(index.shape[1]):
            col = None
            for t in range(self.tokens):
                i = int(index[t, j])
                if i < 0:
                    continue
                c = column(i)
                if col is None:
                    col = c
                elif not torch.equal(col, c):
                    raise FormatError(f"{self.path}: the {what} differs between tokens at item {j}: not one nn.Linear shared by all tokens")
            cols.append(col)
        return torch.stack(cols, dim=1) if cols else torch.zeros(0, 0)

    def _layer(self):
        return torch.nn.TransformerEncoderLayer(self.d, self.nhead, self.ffn, dropout=0.0, activation="relu",
                                                batch_first=True, norm_first=True, layer_norm_eps=self.eps)

    def state_dict(self):
        """The stock nn.TransformerEncoder's state dict (keys layers.i.…)."""
        sd = {}
        for i, blk in enumerate(self.cfg["blocks"]):
            sd.update(_layer_state(self.need, blk["layer"], f"layers.{i}."))
        return sd

    def encoder(self):
        """A stock nn.TransformerEncoder with the model's weights (strict load)."""
        enc = torch.nn.TransformerEncoder(self._layer(), self.layers, enable_nested_tensor=False)
        enc.load_state_dict(self.state_dict(), strict=True)
        return enc.eval()

    def input_linear(self):
        """nn.Linear(bits a token, d_model, bias=False): one token's input bits → its embedding."""
        lin = torch.nn.Linear(self.in_weight.shape[1], self.d, bias=False)
        with torch.no_grad():
            lin.weight.copy_(self.in_weight)
        return lin

    @property
    def pos(self):
        """The position embedding [tokens, d_model]."""
        return self.base

    def readout_linear(self):
        """nn.Linear(d_model, outputs a token): output bit = value >= 0."""
        lin = torch.nn.Linear(self.d, self.out_weight.shape[1])
        with torch.no_grad():
            lin.weight.copy_(self.out_weight[:self.d].T)
            lin.bias.copy_(self.out_weight[self.d])
        return lin

    def token_bits(self, bits):
        """[n, inputs] (or [inputs]) 0/1 → [n, tokens, bits a token] float32."""
        bits = torch.as_tensor(bits).reshape(-1, self.inputs).to(torch.float32)
        padded = torch.cat([bits, torch.zeros(bits.shape[0], 1)], dim=1)
        return padded[:, self.in_index]  # index -1 reads the zero column

    def output_bits(self, fired):
        """[n, tokens, outputs a token] bool → [n, outputs] uint8."""
        flat = torch.zeros(fired.shape[0], self.outputs, dtype=torch.uint8)
        for t in range(self.tokens):
            for j in range(self.out_index.shape[1]):
                k = int(self.out_index[t, j])
                if k >= 0:
                    flat[:, k] = fired[:, t, j].to(torch.uint8)
        return flat

    def _run_stock(self, bits, dtype):
        if dtype == torch.float16:
            return self._run_stock_emulated(bits, dtype)
        if dtype not in self._stock_modules:
            self._stock_modules[dtype] = tuple(mod.to(dtype) for mod in (self.input_linear(), self.encoder(), self.readout_linear()))
        embed, enc, readout = self._stock_modules[dtype]
        with torch.no_grad():
            y = readout(enc(embed(self.token_bits(bits).to(dtype)) + self.pos.to(dtype)))
        return self.output_bits(y >= 0)

    def _run_stock_emulated(self, bits, dtype):
        """A stock model's pass in a format PyTorch 1.13's CPU kernels lack
        (float16: no half LayerNorm, matmul, softmax or relu on the CPU):
        the encoder layer's equations (docs/export.md), weights and the
        result of every step (each product, sum, LayerNorm, softmax, relu)
        rounded to dtype, each computed in float32."""
        r = lambda t: _round(t, dtype)
        key = ("emulated", dtype)
        if key not in self._stock_modules:
            self._stock_modules[key] = {k: r(v) for k, v in self.state_dict().items()}
        sd = self._stock_modules[key]
        with torch.no_grad():
            x = r(r(self.token_bits(bits) @ r(self.in_weight).T) + r(self.pos))
            for i in range(self.layers):
                x = _emulated_layer(x, lambda s: sd[f"layers.{i}.{s}"], self.nhead, self.eps, r)
            lin = self.readout_linear()
            y = r(r(x @ r(lin.weight).T) + r(lin.bias))
        return self.output_bits(y >= 0)

    _dense = staticmethod(_dense)

    def _norm(self, n):
        if n is None:
            return None
        g = self._dense(self.need(n["weight"], 1, self.d)).reshape(-1)
        return g, _eps(self.path, n.get("eps"), "a norm's eps", True)

    def _weights(self, dtype):
        """The weights for a pass in dtype: float32 as loaded; float64
        likewise sparse or dense; bfloat16 and float16 rounded to dtype and
        held in float32 (PyTorch's CPU sparse kernels take neither)."""
        if dtype == torch.float32:
            return self.W
        if dtype not in self._typed:
            conv = {}
            for name, w in self.W.items():
                if w.layout == torch.strided:
                    conv[name] = w.to(dtype) if dtype == torch.float64 else _round(w, dtype)
                else:
                    vals = w.values().to(dtype) if dtype == torch.float64 else _round(w.values(), dtype)
                    conv[name] = torch.sparse_csr_tensor(w.crow_indices(), w.col_indices(), vals, size=w.shape)
            self._typed[dtype] = conv
        return self._typed[dtype]

    def _mm(self, w, x):
        """x @ wᵀ for x [N, cols] and w [rows, cols] sparse or dense."""
        if w.layout == torch.strided:
            return x @ w.T
        if w._nnz() == 0:
            return torch.zeros(x.shape[0], w.shape[0], dtype=x.dtype)
        return (w @ x.T).T

    def _apply_norm(self, n, x, r=None):
        r = r or _same
        if n is None:
            return x
        g, eps = self._norm(n)
        g = r(g.to(x.dtype))
        return r(x * g / r(torch.sqrt(r((x * x).mean(dim=-1, keepdim=True)) + eps)))

    def _attention(self, a, x, W=None, r=None):
        """x: [T, d] of one sample; W the pass's weights (float32's by
        default); r rounds to the pass's format."""
        W, r = W or self.W, r or _same
        out = torch.zeros_like(x)
        for h in a["heads"]:
            q = r(self._mm(W[h["q"]], x))
            k = r(self._mm(W[h["k"]], x))
            v = r(self._mm(W[h["v"]], x))
            # Scores; q is mostly zeros in the models tcforge writes
            # (one-hot queries), so multiply it as a sparse matrix then.
            s = r(q.to_sparse() @ k.T if 4 * int((q != 0).sum()) < q.numel() else q @ k.T)
            if a["mode"] == "hard":
                att = ((s - 1).abs() <= 1e-3).to(x.dtype)
            else:
                att = r(torch.softmax(r(float(a["beta"]) * s), dim=-1))
            if a["mode"] == "hard" and 4 * int(att.sum()) < att.numel():
                att = att.to_sparse()
            out = r(out + r(self._mm(W[h["o"]], r(att @ v))))
        return out

    def _ffn(self, W, f, x, r):
        g = r(self._mm(W[f["w_gate"]], x))
        v = r(self._mm(W[f["w_value"]], x))
        return r(self._mm(W[f["w_out"]], r(r(torch.nn.functional.silu(g)) * v)))

    def run(self, bits, batch=64, dtype=torch.float32):
        """Output bits (uint8 [n, outputs]) of input bits (0/1, [n, inputs]),
        the pass in dtype: float32, float64, or bfloat16 or float16 — for a
        stock model in bfloat16 PyTorch's own kernels; otherwise weights
        and every intermediate result rounded to it, products summed in
        float32 (as CPU bfloat16 matmuls accumulate; PyTorch 1.13 has no
        CPU float16 kernels for these layers)."""
        bits = torch.as_tensor(bits)
        if bits.dim() != 2 or bits.shape[1] != self.inputs:
            raise ValueError(f"{self.path}: want bits of shape [n, {self.inputs}], got {list(bits.shape)}")
        if bits.dtype.is_floating_point or bits.dtype.is_complex or bool(((bits != 0) & (bits != 1)).any()):
            raise ValueError(f"{self.path}: want input bits 0 or 1 (an integer or bool tensor), got dtype {bits.dtype}")
        if dtype not in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            raise ValueError(f"{self.path}: dtype {dtype}: want float32, float64, bfloat16 or float16")
        if self.stock:
            return self._run_stock(bits.to(torch.float32), dtype)
        if self.tokens > 1:
            batch = 1  # one sample at a time: attention is T×T
        outs = []
        for lo in range(0, bits.shape[0], batch):
            outs.append(self._run(bits[lo:lo + batch], dtype))
        return torch.cat(outs) if outs else torch.zeros(0, self.outputs, dtype=torch.uint8)

    def _run(self, bits, dtype):
        n, T, d = bits.shape[0], self.tokens, self.d
        W = self._weights(dtype)
        cdt = torch.float64 if dtype == torch.float64 else torch.float32
        r = _same if cdt == dtype else (lambda t: _round(t, dtype))
        bits = bits.to(cdt)
        base, inp = r(self.base.to(cdt)), r(self.input.to(cdt))
        x = base.unsqueeze(0).repeat(n, 1, 1)  # [n, T, d]
        for b in range(self.inputs):
            x[:, self.input_token[b], :] = r(x[:, self.input_token[b], :] + bits[:, b:b + 1] * inp[b])
        for blk in self.cfg["blocks"]:
            if blk.get("attention"):
                a = blk["attention"]
                y = torch.stack([self._attention(a, xi, W, r) for xi in self._apply_norm(a.get("norm"), x, r)])
                x = r(x + y) if a["residual"] else y
            if blk.get("ffn"):
                f = blk["ffn"]
                y = self._ffn(W, f, self._apply_norm(f.get("norm"), x, r).reshape(n * T, d), r).reshape(n, T, d)
                x = r(x + y) if f["residual"] else y
        vals = x[:, self.out_token, self.out_dim]
        return (vals >= r(self.out_threshold.to(cdt))).to(torch.uint8)


def _eps(path, v, where, zero_ok):
    """A norm epsilon v: a finite number in (0, MAX_EPS], or [0, MAX_EPS]
    if zero_ok."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not (0 <= v if zero_ok else 0 < v) or v > MAX_EPS:
        raise FormatError(f"{path}: {where} is {v!r}: want a number in {'[' if zero_ok else '('}0, {MAX_EPS:g}] (a guard against "
                          f"division by zero; tcforge writes 1e-05 and 1e-06)")
    return float(v)


def _check_computes(path, cp):
    """Checks a config's "computes" section (absent: nothing to check):
    bit order and padding among the known values and, for the
    constructions tcforge ships, as their plugin decides them; a preset's
    capacity or word size and digest length as its parameters say."""
    if cp is None:
        return
    if not isinstance(cp, dict) or not isinstance(cp.get("params", {}), dict):
        raise FormatError(f"{path}: \"computes\" is not a JSON object with \"params\" an object")
    name, order, padding, p = cp.get("construction"), cp.get("bit_order"), cp.get("padding", ""), cp.get("params") or {}
    if order not in BIT_ORDERS:
        raise FormatError(f"{path}: computes.bit_order is {order!r}: want one of {', '.join(BIT_ORDERS)}")
    if padding not in PADDINGS:
        raise FormatError(f"{path}: computes.padding is {padding!r}: want one of {', '.join(repr(x) for x in PADDINGS)}")
    if name in BIT_ORDER and order != BIT_ORDER[name]:
        raise FormatError(f"{path}: computes.bit_order is {order!r}, but construction {name!r} maps bytes to bits {BIT_ORDER[name]}")
    preset = p.get("preset", "")
    if name == "keccak":
        msg, padded = p.get("message_bits"), p.get("padded_bits")
        if isinstance(msg, int) and isinstance(padded, int):
            want = "caller" if msg == padded else "model"
            if padding != want:
                raise FormatError(f"{path}: computes.padding is {padding!r}, but message_bits {msg} and padded_bits {padded} say {want!r}")
        if preset in KECCAK_CAPACITY:
            c = KECCAK_CAPACITY[preset]
            _check_params(path, preset, p, {"w": 64, "capacity": c, "rate": 1600 - c})
        elif preset:
            raise FormatError(f"{path}: computes.params.preset is {preset!r}: not a Keccak preset ({', '.join(KECCAK_CAPACITY)})")
    elif name == "sha2":
        # compress: no padding; block: one block the caller padded;
        # hash: the model pads (internal/safetensors.bitLayout).
        want = {"compress": "none", "block": "caller"}.get(p.get("mode"), "model")
        if padding != want:
            raise FormatError(f"{path}: computes.padding is {padding!r}, but SHA-2's mode {p.get('mode')!r} says {want!r}")
        if "preset" in p and preset not in SHA2_PRESETS:
            raise FormatError(f"{path}: computes.params.preset is {preset!r}: not a SHA-2 preset ({', '.join(SHA2_PRESETS)})")
        if preset in SHA2_PRESETS:
            w, bits = SHA2_PRESETS[preset]
            _check_params(path, preset, p, {"w": w, "digest_bits": bits})


def _check_params(path, preset, params, want):
    """Each parameter of want that params has must equal want's: preset's."""
    bad = {k: params[k] for k in want if k in params and params[k] != want[k]}
    if bad:
        says = ", ".join(f"{k} {v}" for k, v in bad.items())
        should = ", ".join(f"{k} {want[k]}" for k in bad)
        raise FormatError(f"{path}: computes.params.preset is {preset!r}, whose {should}, but the parameters say {says}")


def _same(t):
    """The identity: the rounding of a float32 or float64 pass."""
    return t


def _round(t, dtype):
    """t rounded to dtype (bfloat16, float16) and held as float32."""
    return t.to(dtype).to(torch.float32)


def load(config_path, check=True):
    """Loads the model whose JSON config is config_path (its safetensors
    file is the config's "weights", next to it): a Model, or for a
    decoder (a config with "decoder") a decoder.DecoderModel; unless
    check is false, runs the config's test vectors: a model that does not
    reproduce them raises FormatError naming the first."""
    cfg = _config(config_path)
    if "decoder" in cfg:
        from .decoder import DecoderModel

        return DecoderModel(config_path, cfg, check)
    return Model(config_path, check, cfg)


def bytes_to_bits(data):
    """FIPS 202 bit order: bit i is bit i % 8 of byte i // 8."""
    return torch.tensor([(byte >> i) & 1 for byte in data for i in range(8)], dtype=torch.uint8)


def bits_to_bytes(bits):
    """The inverse of bytes_to_bits (len(bits) a multiple of 8)."""
    bits = [int(b) for b in bits]
    return bytes(sum(bits[8 * j + i] << i for i in range(8)) for j in range(len(bits) // 8))
