"""Bytes in, digest out: a stock model as one self-contained nn.Module.

digest_module(model) wraps a loaded stock export (every block a
torch.nn.TransformerEncoderLayer) whose construction has a byte interface
(docs/export.md, "The byte module"):

    msg uint8 [B, L], lengths int64 [B]            (or one message: uint8 [L])
      -> padding (SHA-3's domain suffix and pad10*1, when the model's caller pads)
      -> byte tokens: nn.Embedding(256, 8 + n) (the byte's bits in the
         model's bit order) + a one-hot position embedding, n = input bytes
      -> nn.MultiheadAttention: one query per (state token, input slot)
         attends to exactly the byte that holds its bit (scores 0 or 1024:
         softmax is exactly one-hot in float32 and float64), a one-hot
         product picks the bit
      -> nn.Linear input map + position embedding, nn.TransformerEncoder,
         nn.Linear readout, bit >= 0
      -> output bits packed into digest bytes (the model's bit order)
    digest uint8 [B, outputs / 8]                  (or [outputs / 8])

torch.jit.script(...) of it loads with torch.jit.load alone; save_onnx
writes the same module as ONNX (standard opsets, no tcforge operator).
"""

from typing import List, Optional

import torch
from torch import nn

from . import FormatError

__all__ = ["DigestModule", "digest_module", "save_torchscript", "save_onnx", "SUFFIX"]

# The byte that follows a message when the caller pads for the model: the
# domain suffix bits then pad10*1's first 1 (FIPS 202 B.2), by preset.
SUFFIX = {"sha3-224": 0x06, "sha3-256": 0x06, "sha3-384": 0x06, "sha3-512": 0x06,
          "shake128": 0x1F, "shake256": 0x1F, "keccak-256": 0x01}

# Attention scores of the byte gathering: the matching byte scores
# GATHER_SCORE, every other 0, so exp(−GATHER_SCORE) is 0 in float32 and
# float64 and the softmax is exactly one-hot.
GATHER_SCORE = 1024.0


def _dtype_name(dt: torch.dtype) -> str:
    """dt's name (TorchScript prints a dtype as a number)."""
    names = [(torch.uint8, "uint8"), (torch.int8, "int8"), (torch.int16, "int16"), (torch.int32, "int32"),
             (torch.int64, "int64"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16"),
             (torch.float32, "float32"), (torch.float64, "float64"), (torch.bool, "bool")]
    for d, name in names:
        if d == dt:
            return name
    return "another dtype"


class DigestModule(nn.Module):
    """msg (uint8 [B, L] with lengths [B], or uint8 [L]) -> digest bytes."""

    def __init__(self, n_bytes: int, min_len: int, max_len: int, suffix: int, msb_first: bool,
                 tokens: int, slots: int, d_model: int, out_bits: int):
        super().__init__()
        self.n_bytes, self.min_len, self.max_len = n_bytes, min_len, max_len
        self.suffix, self.msb_first = suffix, msb_first
        self.tokens, self.slots, self.d_model, self.out_bits = tokens, slots, d_model, out_bits
        width = 8 + n_bytes
        self.byte_embedding = nn.Embedding(256, width)
        self.byte_position = nn.Parameter(torch.zeros(n_bytes, width), requires_grad=False)
        self.gather_queries = nn.Parameter(torch.zeros(tokens * slots, width), requires_grad=False)
        self.gather = nn.MultiheadAttention(width, 1, batch_first=True)  # zero biases
        self.select = nn.Parameter(torch.zeros(tokens, slots, 8), requires_grad=False)
        self.input_map = nn.Linear(slots, d_model, bias=False)
        self.position = nn.Parameter(torch.zeros(tokens, d_model), requires_grad=False)
        self.encoder = nn.Identity()  # set by digest_module
        self.readout = nn.Identity()
        self.register_buffer("out_perm", torch.zeros(out_bits, dtype=torch.long))
        self.register_buffer("bit_weights", torch.zeros(8, dtype=torch.long))

    def forward(self, msg: torch.Tensor, lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
        if msg.dtype != torch.uint8:
            raise ValueError("digest module: msg must be a uint8 tensor of message bytes, got dtype " + _dtype_name(msg.dtype))
        single = msg.dim() == 1
        if single:
            msg = msg.unsqueeze(0)
        if msg.dim() != 2:
            raise ValueError("digest module: msg must be uint8 [batch, bytes] or [bytes], got " + str(msg.dim()) + " dimensions")
        B = msg.shape[0]
        if lengths is None:
            lengths = torch.full([B], msg.shape[1], dtype=torch.long)
        if lengths.dim() != 1 or lengths.shape[0] != B:
            raise ValueError("digest module: lengths must be [" + str(B) + "] (one length a message), got shape " + str(list(lengths.shape)))
        lengths = lengths.to(torch.long)
        if B > 0:
            lo, hi = int(lengths.min()), int(lengths.max())
            if lo < self.min_len or hi > self.max_len:
                if self.min_len == self.max_len:
                    want = "exactly " + str(self.max_len) + " bytes"
                else:
                    want = str(self.min_len) + " to " + str(self.max_len) + " bytes"
                raise ValueError("digest module: a message of " + str(hi if hi > self.max_len else lo) + " bytes; this model hashes " + want)
            if hi > msg.shape[1]:
                raise ValueError("digest module: a length of " + str(hi) + " bytes exceeds msg's " + str(msg.shape[1]) + " columns")
        return self.digest(msg, lengths, single)

    def digest(self, msg: torch.Tensor, lengths: torch.Tensor, single: bool) -> torch.Tensor:
        """The digest of checked inputs (the ONNX graph starts here)."""
        B, L, n = msg.shape[0], msg.shape[1], self.n_bytes
        m = msg.to(torch.long)
        if L < n:
            m = torch.cat([m, torch.zeros(B, n - L, dtype=torch.long)], dim=1)
        m = m[:, :n]
        pos = torch.arange(n).unsqueeze(0)
        length = lengths.unsqueeze(1)
        b = torch.where(pos < length, m, torch.zeros_like(m))
        if self.suffix >= 0:
            b = b + (pos == length).to(torch.long) * self.suffix + (pos == n - 1).to(torch.long) * 0x80
        tokens = self.byte_embedding(b) + self.byte_position
        queries = self.gather_queries.unsqueeze(0).expand(B, -1, -1)
        got, _ = self.gather(queries, tokens, tokens, need_weights=False)
        bits8 = got[:, :, :8].reshape(B, self.tokens, self.slots, 8)
        token_bits = (bits8 * self.select).sum(dim=-1)
        x = self.input_map(token_bits) + self.position
        fired = (self.readout(self.encoder(x)) >= 0).to(torch.long).reshape(B, -1)
        bits = fired.index_select(1, self.out_perm).reshape(B, self.out_bits // 8, 8)
        out = (bits * self.bit_weights).sum(dim=-1).to(torch.uint8)
        if single:
            return out[0]
        return out


def _byte_interface(model):
    """(n_bytes, min_len, max_len, suffix, msb_first) of model's byte
    interface, or FormatError saying why it has none."""
    cp = model.cfg.get("computes")
    if not isinstance(cp, dict):
        raise FormatError(f"{model.path}: no \"computes\" section: re-export with a tcforge that writes it (the byte module needs the construction's bit order and padding)")
    order = cp.get("bit_order")
    if order not in ("lsb-first", "msb-first"):
        raise FormatError(f"{model.path}: construction {cp.get('construction')!r} has bit order {order!r}: no byte interface")
    if model.inputs % 8 or model.outputs % 8:
        raise FormatError(f"{model.path}: {model.inputs} input and {model.outputs} output bits: not whole bytes")
    n = model.inputs // 8
    params = cp.get("params") or {}
    if cp.get("padding") == "caller" and params.get("preset") in SUFFIX and cp.get("construction") == "keccak":
        # One padded block: messages of 0 … n − 1 bytes, padded here.
        return n, 0, n - 1, SUFFIX[params["preset"]], False
    return n, n, n, -1, order == "msb-first"


def digest_module(model):
    """The DigestModule of a loaded stock model (tcforge_torch.load)."""
    if not model.stock:
        raise FormatError(f"{model.path}: architecture {model.arch!r} is not stock encoder layers; the byte module wraps tokens-as-states models")
    n, lo, hi, suffix, msb = _byte_interface(model)
    T, k, d = model.tokens, model.in_index.shape[1], model.d
    mod = DigestModule(n, lo, hi, suffix, msb, T, k, d, model.outputs)
    width = 8 + n
    with torch.no_grad():
        emb = torch.zeros(256, width)
        for v in range(256):
            for i in range(8):
                emb[v, i] = (v >> (7 - i if msb else i)) & 1
        mod.byte_embedding.weight.copy_(emb)
        mod.byte_position.copy_(torch.cat([torch.zeros(n, 8), torch.eye(n)], dim=1))
        # Projections: queries and keys read the position dims, values the bits.
        eye = torch.eye(width)
        pos_only = torch.diag(torch.cat([torch.zeros(8), torch.ones(n)]))
        bits_only = torch.diag(torch.cat([torch.ones(8), torch.zeros(n)]))
        mod.gather.in_proj_weight.copy_(torch.cat([pos_only, pos_only, bits_only]))
        mod.gather.in_proj_bias.zero_()
        mod.gather.out_proj.weight.copy_(eye)
        mod.gather.out_proj.bias.zero_()
        scale = GATHER_SCORE * width ** 0.5  # MHA divides scores by sqrt(head dim)
        q = torch.zeros(T * k, width)
        sel = torch.zeros(T, k, 8)
        for t in range(T):
            for j in range(k):
                i = int(model.in_index[t, j])
                if i < 0:
                    q[t * k + j, 8] = scale  # any byte: the selection is zero
                    continue
                q[t * k + j, 8 + i // 8] = scale
                sel[t, j, i % 8] = 1
        mod.gather_queries.copy_(q)
        mod.select.copy_(sel)
        mod.input_map.weight.copy_(model.in_weight)
        mod.position.copy_(model.pos)
        m = model.out_index.shape[1]
        perm = torch.zeros(model.outputs, dtype=torch.long)
        for t in range(T):
            for j in range(m):
                o = int(model.out_index[t, j])
                if o >= 0:
                    perm[o] = t * m + j
        mod.out_perm.copy_(perm)
        mod.bit_weights.copy_(torch.tensor([1 << (7 - i if msb else i) for i in range(8)]))
    mod.encoder = model.encoder()
    mod.readout = model.readout_linear()
    return mod.eval()


def save_torchscript(mod, path):
    """Writes mod as TorchScript: torch.jit.load(path) needs no tcforge."""
    torch.jit.save(torch.jit.script(mod), path)


class _Graph(nn.Module):
    """The ONNX graph: the module's digest of a batch, without the checks
    (ONNX has no exceptions; lengths are the caller's to keep in range)."""

    def __init__(self, mod):
        super().__init__()
        self.mod = mod

    def forward(self, msg, lengths):
        return self.mod.digest(msg, lengths, False)


def save_onnx(mod, path, opset=14):
    """Writes mod as an ONNX model with inputs msg (uint8 [batch, bytes])
    and lengths (int64 [batch]) and output digest (uint8 [batch, bytes])."""
    n = mod.n_bytes
    msg = torch.zeros(2, n, dtype=torch.uint8)
    lengths = torch.full([2], mod.max_len, dtype=torch.long)
    # With gradients on, nn.TransformerEncoderLayer takes its composite
    # path (standard ONNX ops), not the fused kernel ONNX has no op for.
    with torch.enable_grad():
        torch.onnx.export(_Graph(mod), (msg, lengths), path, input_names=["msg", "lengths"], output_names=["digest"],
                          dynamic_axes={"msg": {0: "batch"}, "lengths": {0: "batch"}, "digest": {0: "batch"}},
                          opset_version=opset, do_constant_folding=False)
