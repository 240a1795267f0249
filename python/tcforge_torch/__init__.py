"""Load a tcforge model export (safetensors + JSON config) into PyTorch.

The format is documented in docs/export.md of the tcforge repository. A
model maps input bits to output bits:

    x = base; x[input_token[b]] += input[b] for every input bit b = 1
    per block: x = x + Attn(Norm(x))   (x = Attn(Norm(x)) without residual)
               x = x + FFN(Norm(x))
    bit k = x[readout.token[k], readout.dim[k]] >= readout.threshold[k]

Only torch is needed; the safetensors file is parsed here.
"""

import json
import os
import struct
import warnings

import torch

__all__ = ["FormatError", "Model", "load", "bytes_to_bits", "bits_to_bytes"]

FORMAT = "tcforge-model"
VERSIONS = (1,)
LAYOUTS = ("csr", "dense")
_DTYPES = {"F32": (torch.float32, 4), "I32": (torch.int32, 4)}

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


class FormatError(ValueError):
    """A malformed export: the message names the file and the tensor."""


def _read_safetensors(path):
    """Returns {name: (dtype, shape, raw bytes)} and the metadata."""
    with open(path, "rb") as f:
        data = f.read()
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
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, h in header.items():
        try:
            dt, shape, (a, b) = h["dtype"], [int(s) for s in h["shape"]], h["data_offsets"]
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
    return out, meta


def _tensor(path, raw, name, dtype, shape):
    """Returns tensor name of raw, checking its dtype and shape."""
    if name not in raw:
        raise FormatError(f"{path}: tensor {name!r} is missing")
    dt, sh, buf = raw[name]
    if dt != dtype or sh != list(shape):
        raise FormatError(f"{path}: tensor {name!r}: {dt} {sh}, want {dtype} {list(shape)}")
    t = torch.frombuffer(bytearray(buf), dtype=_DTYPES[dt][0]) if len(buf) else torch.empty(0, dtype=_DTYPES[dt][0])
    return t.reshape(shape)


class Model:
    """A loaded model: run(bits) computes its output bits."""

    def __init__(self, config_path):
        self.path = config_path
        try:
            with open(config_path) as f:
                cfg = json.load(f)
        except ValueError as e:
            raise FormatError(f"{config_path}: not JSON: {e}") from None
        if cfg.get("format") != FORMAT:
            raise FormatError(f"{config_path}: format {cfg.get('format')!r}, want {FORMAT!r}")
        if cfg.get("version") not in VERSIONS:
            raise FormatError(f"{config_path}: unknown format version {cfg.get('version')!r} (this loader reads {', '.join(map(str, VERSIONS))})")
        if cfg.get("layout") not in LAYOUTS:
            raise FormatError(f"{config_path}: unknown layout {cfg.get('layout')!r}")
        self.cfg = cfg
        self.arch = cfg.get("architecture", "")
        self.tokens, self.d = int(cfg["tokens"]), int(cfg["d_model"])
        weights = os.path.join(os.path.dirname(config_path), cfg["weights"])
        raw, meta = _read_safetensors(weights)
        if meta.get("format", FORMAT) != FORMAT:
            raise FormatError(f"{weights}: metadata format {meta.get('format')!r}, want {FORMAT!r}")
        self.W = {}
        for name, sh in cfg["tensors"].items():
            rows, cols, nnz = int(sh["rows"]), int(sh["cols"]), int(sh["nnz"])
            if cfg["layout"] == "dense":
                w = _tensor(weights, raw, name, "F32", (rows, cols))
                if rows * cols > 4096 and 4 * int((w != 0).sum()) < rows * cols:
                    w = w.to_sparse_csr()  # stored dense, computed sparse
                self.W[name] = w
                continue
            crow = _tensor(weights, raw, name + ".crow_indices", "I32", (rows + 1,))
            col = _tensor(weights, raw, name + ".col_indices", "I32", (nnz,))
            val = _tensor(weights, raw, name + ".values", "F32", (nnz,))
            if rows + 1 > 0 and (int(crow[0]) != 0 or int(crow[-1]) != nnz or bool((crow[1:] < crow[:-1]).any())):
                raise FormatError(f"{weights}: tensor {name + '.crow_indices'!r}: not a row pointer over {nnz} entries")
            if nnz and (int(col.min()) < 0 or int(col.max()) >= cols):
                raise FormatError(f"{weights}: tensor {name + '.col_indices'!r}: column outside [0, {cols})")
            self.W[name] = torch.sparse_csr_tensor(crow, col, val, size=(rows, cols))

        def need(name, rows=None, cols=None):
            if name not in self.W:
                raise FormatError(f"{config_path}: tensor {name!r} is used but not listed in \"tensors\"")
            r, c = self.W[name].shape
            if (rows is not None and r != rows) or (cols is not None and c != cols):
                raise FormatError(f"{config_path}: tensor {name!r} is {r}×{c}, want {rows if rows is not None else r}×{cols if cols is not None else c}")
            return self.W[name]

        self.need = need
        emb = cfg["embedding"]
        self.inputs = len(emb["input_token"])
        self.base = self._dense(need(emb["base"], self.tokens, self.d))
        self.input = self._dense(need(emb["input"], self.inputs, self.d))
        self.input_token = torch.tensor(emb["input_token"], dtype=torch.long)
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
        self.out_token = torch.tensor(r["token"], dtype=torch.long)
        self.out_dim = torch.tensor(r["dim"], dtype=torch.long)
        self.out_threshold = torch.tensor(r["threshold"], dtype=torch.float32)
        if len(self.out_token) and (int(self.out_token.max()) >= self.tokens or int(self.out_dim.max()) >= self.d):
            raise FormatError(f"{config_path}: readout outside {self.tokens} tokens × {self.d} dims")
        self.outputs = len(self.out_token)

    @staticmethod
    def _dense(w):
        return w.to_dense() if w.layout != torch.strided else w

    def _norm(self, n):
        if n is None:
            return None
        g = self._dense(self.need(n["weight"], 1, self.d)).reshape(-1)
        return g, float(n["eps"])

    def _mm(self, w, x):
        """x @ wᵀ for x [N, cols] and w [rows, cols] sparse or dense."""
        if w.layout == torch.strided:
            return x @ w.T
        if w._nnz() == 0:
            return torch.zeros(x.shape[0], w.shape[0], dtype=x.dtype)
        return (w @ x.T).T

    def _apply_norm(self, n, x):
        if n is None:
            return x
        g, eps = self._norm(n)
        return x * g / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)

    def _attention(self, a, x):
        """x: [T, d] of one sample."""
        out = torch.zeros_like(x)
        for h in a["heads"]:
            q = self._mm(self.W[h["q"]], x)
            k = self._mm(self.W[h["k"]], x)
            v = self._mm(self.W[h["v"]], x)
            # Scores; q is mostly zeros in the models tcforge writes
            # (one-hot queries), so multiply it as a sparse matrix then.
            s = q.to_sparse() @ k.T if 4 * int((q != 0).sum()) < q.numel() else q @ k.T
            if a["mode"] == "hard":
                att = ((s - 1).abs() <= 1e-3).to(x.dtype)
            else:
                att = torch.softmax(float(a["beta"]) * s, dim=-1)
            if a["mode"] == "hard" and 4 * int(att.sum()) < att.numel():
                att = att.to_sparse()
            out = out + self._mm(self.W[h["o"]], att @ v)
        return out

    def _ffn(self, f, x):
        g = self._mm(self.W[f["w_gate"]], x)
        v = self._mm(self.W[f["w_value"]], x)
        return self._mm(self.W[f["w_out"]], torch.nn.functional.silu(g) * v)

    def run(self, bits, batch=64):
        """Output bits (uint8 [n, outputs]) of input bits (0/1, [n, inputs])."""
        bits = torch.as_tensor(bits)
        if bits.dim() != 2 or bits.shape[1] != self.inputs:
            raise ValueError(f"{self.path}: want bits of shape [n, {self.inputs}], got {list(bits.shape)}")
        if self.tokens > 1:
            batch = 1  # one sample at a time: attention is T×T
        outs = []
        for lo in range(0, bits.shape[0], batch):
            outs.append(self._run(bits[lo:lo + batch].to(torch.float32)))
        return torch.cat(outs) if outs else torch.zeros(0, self.outputs, dtype=torch.uint8)

    def _run(self, bits):
        n, T, d = bits.shape[0], self.tokens, self.d
        x = self.base.unsqueeze(0).repeat(n, 1, 1)  # [n, T, d]
        for b in range(self.inputs):
            x[:, self.input_token[b], :] += bits[:, b:b + 1] * self.input[b]
        for blk in self.cfg["blocks"]:
            if blk.get("attention"):
                a = blk["attention"]
                y = torch.stack([self._attention(a, xi) for xi in self._apply_norm(a.get("norm"), x)])
                x = x + y if a["residual"] else y
            if blk.get("ffn"):
                f = blk["ffn"]
                y = self._ffn(f, self._apply_norm(f.get("norm"), x).reshape(n * T, d)).reshape(n, T, d)
                x = x + y if f["residual"] else y
        vals = x[:, self.out_token, self.out_dim]
        return (vals >= self.out_threshold).to(torch.uint8)


def load(config_path):
    """Loads the model whose JSON config is config_path (its safetensors
    file is the config's "weights", next to it)."""
    return Model(config_path)


def bytes_to_bits(data):
    """FIPS 202 bit order: bit i is bit i % 8 of byte i // 8."""
    return torch.tensor([(byte >> i) & 1 for byte in data for i in range(8)], dtype=torch.uint8)


def bits_to_bytes(bits):
    """The inverse of bytes_to_bits (len(bits) a multiple of 8)."""
    bits = [int(b) for b in bits]
    return bytes(sum(bits[8 * j + i] << i for i in range(8)) for j in range(len(bits) // 8))
