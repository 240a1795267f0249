"""Bytes in, digest out: a stock model as one self-contained nn.Module.

digest_module(model) wraps a loaded stock export (every block a
torch.nn.TransformerEncoderLayer) whose construction has a byte interface
(docs/export.md, "The byte module"):

    msg uint8 [B, L], lengths int64 [B]            (or one message: uint8 [L])
      -> padding (SHA-3's domain suffix and pad10*1 when the model's caller
         pads; SHA-2's IV, 0x80 and bit length before a compression model)
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

save_torchscript writes it as TorchScript (the encoder traced, the rest
scripted), which torch.jit.load alone loads; save_onnx
writes the same module as ONNX (standard opsets, no tcforge operator).
"""

import hashlib
import json
import os
import stat
import zipfile
from typing import Optional, Tuple

import torch
from torch import nn

from . import FormatError, atomic_write

__all__ = ["DigestModule", "digest_module", "check_module", "save_torchscript", "save_onnx", "written_here", "SUFFIX"]

# The byte that follows a message when the caller pads for the model: the
# domain suffix bits then pad10*1's first 1 (FIPS 202 B.2), by preset.
SUFFIX = {"sha3-224": 0x06, "sha3-256": 0x06, "sha3-384": 0x06, "sha3-512": 0x06,
          "shake128": 0x1F, "shake256": 0x1F, "keccak-256": 0x01}

# SHA-2's initial values (FIPS 180-4 5.3), by preset: a compression model
# (mode "compress": chaining value and one block in) hashes one block from
# them.
SHA2_IV = {
    "sha224": [0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4],
    "sha256": [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19],
    "sha384": [0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17, 0x152fecd8f70e5939,
               0x67332667ffc00b31, 0x8eb44a8768581511, 0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4],
    "sha512": [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
               0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179],
}

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


def check_message(msg: torch.Tensor, lengths: Optional[torch.Tensor], min_len: int, max_len: int) -> Tuple[torch.Tensor, torch.Tensor, bool]:
    """A byte module's input checked: msg uint8 [B, L] with lengths [B]
    (default L each) or one message uint8 [L], each length in min_len …
    max_len and within msg's columns; returns msg [B, L], lengths int64
    [B] and whether it was one message. Raises ValueError naming the
    problem."""
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
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise ValueError("digest module: lengths must be an integer tensor (int64: bytes a message), got dtype " + _dtype_name(lengths.dtype))
    lengths = lengths.to(torch.long)
    if B > 0:
        lo, hi = int(lengths.min()), int(lengths.max())
        if lo < min_len or hi > max_len:
            if min_len == max_len:
                want = "exactly " + str(max_len) + " bytes"
            else:
                want = str(min_len) + " to " + str(max_len) + " bytes"
            raise ValueError("digest module: a message of " + str(hi if hi > max_len else lo) + " bytes; this model hashes " + want)
        if hi > msg.shape[1]:
            raise ValueError("digest module: a length of " + str(hi) + " bytes exceeds msg's " + str(msg.shape[1]) + " columns")
    return msg, lengths, single


def pad_message(msg: torch.Tensor, lengths: torch.Tensor, n: int, s0: int, suffix: int, length_bytes: int,
                const_bytes: torch.Tensor, length_div: torch.Tensor, length_mask: torch.Tensor) -> torch.Tensor:
    """The model's n input bytes (int64 [B, n]) of checked messages: byte
    p is message byte p − s0 where 0 ≤ p − s0 < length, plus const_bytes,
    the suffix byte (≥ 0) at p − s0 = length, and the big-endian bit
    length's bytes (length_bytes of them: (8 · length // length_div[p]) %
    256 where length_mask[p] is 1)."""
    B, L = msg.shape[0], msg.shape[1]
    m = msg.to(torch.long)
    if s0 > 0:
        m = torch.cat([torch.zeros(B, s0, dtype=torch.long), m], dim=1)
    if s0 + L < n:
        m = torch.cat([m, torch.zeros(B, n - s0 - L, dtype=torch.long)], dim=1)
    m = m[:, :n]
    rel = torch.arange(n).unsqueeze(0) - s0  # byte p holds message byte p − msg_start
    length = lengths.unsqueeze(1)
    b = torch.where((rel >= 0) & (rel < length), m, torch.zeros_like(m)) + const_bytes
    if suffix >= 0:
        b = b + (rel == length).to(torch.long) * suffix
    if length_bytes > 0:
        b = b + torch.div(8 * length, length_div, rounding_mode="floor") % 256 * length_mask
    return b


class DigestModule(nn.Module):
    """msg (uint8 [B, L] with lengths [B], or uint8 [L]) -> digest bytes."""

    def __init__(self, n_bytes: int, min_len: int, max_len: int, suffix: int, msb_first: bool,
                 tokens: int, slots: int, d_model: int, out_bits: int, msg_start: int = 0, length_bytes: int = 0):
        super().__init__()
        self.n_bytes, self.min_len, self.max_len = n_bytes, min_len, max_len
        self.suffix, self.msb_first = suffix, msb_first
        self.msg_start, self.length_bytes = msg_start, length_bytes
        self.tokens, self.slots, self.d_model, self.out_bits = tokens, slots, d_model, out_bits
        # The padded input's constant bytes (SHA-3's final 0x80, SHA-2's
        # IV) and, for SHA-2, the big-endian bit length in the last
        # length_bytes: byte p is (8 · length // length_div[p]) % 256 where
        # length_mask[p] is 1.
        self.register_buffer("const_bytes", torch.zeros(n_bytes, dtype=torch.long))
        self.register_buffer("length_div", torch.ones(n_bytes, dtype=torch.long))
        self.register_buffer("length_mask", torch.zeros(n_bytes, dtype=torch.long))
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
        msg, lengths, single = check_message(msg, lengths, self.min_len, self.max_len)
        if msg.shape[0] == 0:
            return torch.zeros(0, self.out_bits // 8, dtype=torch.uint8)
        return self.digest(msg, lengths, single)

    def digest(self, msg: torch.Tensor, lengths: torch.Tensor, single: bool) -> torch.Tensor:
        """The digest of checked inputs (the ONNX graph starts here)."""
        out = self.hash_bytes(self.pad(msg, lengths))
        if single:
            return out[0]
        return out

    def pad(self, msg: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The model's n input bytes (long [B, n]) of checked messages
        (pad_message)."""
        return pad_message(msg, lengths, self.n_bytes, self.msg_start, self.suffix, self.length_bytes,
                           self.const_bytes, self.length_div, self.length_mask)

    def hash_bytes(self, b: torch.Tensor) -> torch.Tensor:
        """The digest (uint8 [B, out_bits / 8]) of the model's input bytes
        b (long [B, n], values 0 … 255): gather, encoder, readout, packing."""
        B = b.shape[0]
        tokens = self.byte_embedding(b) + self.byte_position
        queries = self.gather_queries.unsqueeze(0).expand(B, -1, -1)
        got, _ = self.gather(queries, tokens, tokens, need_weights=False)
        bits8 = got[:, :, :8].reshape(B, self.tokens, self.slots, 8)
        token_bits = (bits8 * self.select).sum(dim=-1)
        x = self.input_map(token_bits) + self.position
        fired = (self.readout(self.encoder(x)) >= 0).to(torch.long).reshape(B, -1)
        bits = fired.index_select(1, self.out_perm).reshape(B, self.out_bits // 8, 8)
        return (bits * self.bit_weights).sum(dim=-1).to(torch.uint8)


class _Interface:
    """How a model's input bytes come from a message: n input bytes, the
    message at msg_start with min_len … max_len bytes, then the suffix
    byte (−1: none), constant bytes, a big-endian bit length in the last
    length_bytes, and the digest's first digest_bits output bits."""

    def __init__(self, n, min_len, max_len, msb_first, digest_bits, suffix=-1, msg_start=0, length_bytes=0, const=None):
        self.n, self.min_len, self.max_len, self.msb_first = n, min_len, max_len, msb_first
        self.digest_bits, self.suffix, self.msg_start, self.length_bytes = digest_bits, suffix, msg_start, length_bytes
        self.const = const or {}


def _byte_interface(model):
    """The _Interface of model's byte interface, or FormatError saying why
    it has none."""
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
    msb = order == "msb-first"
    if cp.get("construction") == "sha2" and params.get("mode") in ("compress", "block"):
        return _sha2_block(model, cp, params)
    if cp.get("padding") == "caller" and params.get("preset") in SUFFIX and cp.get("construction") == "keccak":
        # One padded block: messages of 0 … n − 1 bytes, padded here.
        return _Interface(n, 0, n - 1, False, model.outputs, suffix=SUFFIX[params["preset"]], const={n - 1: 0x80})
    if cp.get("construction") == "ascon" and cp.get("padding") == "caller" and n >= 8:
        # Whole padded 8-byte blocks (padding = "caller"), the last one
        # holding the message's end, then SP 800-232's pad10*: a 0x01 byte
        # and zeros. A sponge absorbs every block, so a model of n bytes
        # hashes the messages of n − 8 … n − 1 bytes (one model a block
        # count).
        return _Interface(n, n - 8, n - 1, True, model.outputs, suffix=0x01)
    if cp.get("construction") == "blake2s" and params.get("mode") == "block":
        # One final block (mode = "block"): the message zero-padded to 64
        # bytes, then its length in bits (8 bytes, big-endian), whose
        # eighth is BLAKE2s's counter: messages of 0 … 64 bytes.
        return _Interface(n, 0, n - 8, True, model.outputs, length_bytes=8)
    return _Interface(n, n, n, msb, model.outputs)


def _sha2_block(model, cp, params):
    """A SHA-2 compression model (mode "compress": inputs chain, 8 words,
    then block, 16 words; output chain) or one-block model (mode "block":
    input block; output digest) as one-block hashing: the IV of its preset
    as the chain (a compression model's input; the block model holds it),
    the message, 0x80, zeros and the message's bit length (2w bits,
    big-endian) as the block; the digest is the chain's first digest_bits."""
    preset = params.get("preset")
    if preset not in SHA2_IV:
        raise FormatError(f"{model.path}: SHA-2 model of preset {preset!r}: no IV table (byte modules take {', '.join(SHA2_IV)})")
    w = 32 if preset in ("sha224", "sha256") else 64
    digest_bits = int(params.get("digest_bits", 8 * w))
    names = [(r.get("name"), r.get("bits")) for r in cp.get("inputs") or []]
    block, field = 2 * w, w // 4  # bytes: block, length field
    if params.get("mode") == "block":
        if names != [("block", 16 * w)] or model.outputs != digest_bits:
            raise FormatError(f"{model.path}: SHA-2 block model with inputs {names} and {model.outputs} outputs: want block ({16 * w} bits) and {digest_bits} outputs")
        return _Interface(block, 0, block - 1 - field, True, digest_bits, suffix=0x80, length_bytes=field)
    if names != [("chain", 8 * w), ("block", 16 * w)] or model.outputs != 8 * w:
        raise FormatError(f"{model.path}: SHA-2 compression model with inputs {names} and {model.outputs} outputs: want chain ({8 * w} bits), block ({16 * w}) and {8 * w} outputs")
    chain = w  # bytes of the chaining value
    const = {}
    for i, word in enumerate(SHA2_IV[preset]):
        for j in range(w // 8):
            const[i * (w // 8) + j] = (word >> (w - 8 - 8 * j)) & 0xFF
    return _Interface(chain + block, 0, block - 1 - field, True, digest_bits, suffix=0x80, msg_start=chain, length_bytes=field, const=const)


def _interface_buffers(mod, bi):
    """Sets a byte module's padding buffers (const_bytes, length_div,
    length_mask) from interface bi."""
    n = bi.n
    for p, v in bi.const.items():
        mod.const_bytes[p] = v
    for q in range(bi.length_bytes):
        p = n - 1 - q  # the length's byte q from the end: 8 · length >> 8q
        if q < 7:
            mod.length_div[p] = 1 << (8 * q)
            mod.length_mask[p] = 1


def digest_module(model):
    """The DigestModule of a loaded stock model (tcforge_torch.load)."""
    if not model.stock:
        raise FormatError(f"{model.path}: architecture {model.arch!r} is not stock encoder layers; the byte module wraps tokens-as-states models")
    bi = _byte_interface(model)
    n, msb = bi.n, bi.msb_first
    T, k, d = model.tokens, model.in_index.shape[1], model.d
    mod = DigestModule(n, bi.min_len, bi.max_len, bi.suffix, msb, T, k, d, bi.digest_bits, bi.msg_start, bi.length_bytes)
    width = 8 + n
    with torch.no_grad():
        _interface_buffers(mod, bi)
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
        perm = torch.zeros(bi.digest_bits, dtype=torch.long)
        for t in range(T):
            for j in range(m):
                o = int(model.out_index[t, j])
                if 0 <= o < bi.digest_bits:
                    perm[o] = t * m + j
        mod.out_perm.copy_(perm)
        mod.bit_weights.copy_(torch.tensor([1 << (7 - i if msb else i) for i in range(8)]))
    mod.encoder = model.encoder()
    mod.readout = model.readout_linear()
    return mod.eval()


def _pack(bits, msb):
    """uint8 bits [k, 8m] → long bytes [k, m] in the bit order."""
    w = torch.tensor([1 << (7 - i if msb else i) for i in range(8)], dtype=torch.long)
    return (bits.to(torch.long).reshape(bits.shape[0], -1, 8) * w).sum(dim=-1)


def _reference(model, bi):
    """An independent reference for the byte module's function, where the
    config names a standard instance at full size: (its name, a function
    of one message returning the digest bytes), else None. hashlib's
    SHA-3, SHAKE and SHA-2 (Keccak-256 has none there)."""
    cp = model.cfg["computes"]
    p = cp.get("params") or {}
    preset, name = p.get("preset"), cp.get("construction")
    out = bi.digest_bits // 8
    if name == "keccak" and preset in ("sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256"):
        if (p.get("rounds"), p.get("w"), p.get("blocks"), p.get("zero_rc_rounds", 0), p.get("first_block", "xor")) != (24, 64, 1, 0, "xor"):
            return None
        algo = preset.replace("-", "_")
        if preset.startswith("shake"):
            return f"hashlib.{algo}", lambda m: hashlib.new(algo, m).digest(out)
        return f"hashlib.{algo}", lambda m: hashlib.new(algo, m).digest()[:out]
    if name == "sha2" and preset in ("sha224", "sha256", "sha384", "sha512"):
        full = 64 if preset in ("sha224", "sha256") else 80
        if p.get("rounds") != full or p.get("blocks", 1) != 1:
            return None
        return f"hashlib.{preset}", lambda m: hashlib.new(preset, m).digest()[:out]
    return None


def check_module(mod, model):
    """Checks a DigestModule against what the config says before it is
    written: the config's test vectors through the module's own byte path
    (padded input bytes in the bit order → digest bytes), and, for a
    standard instance at full size (SHA3-*, SHAKE*, SHA-2), messages of
    the shortest, a middle and the longest length against hashlib, which
    catches a bit order, padding or preset that does not describe the
    model. Raises FormatError naming the first mismatch; returns what was
    checked, for the module's provenance."""
    bi = _byte_interface(model)
    done = {}
    ins, outs = model.test_vectors()
    if len(ins):
        with torch.no_grad():
            got = mod.hash_bytes(_pack(ins, bi.msb_first))
        want = _pack(outs[:, :bi.digest_bits], bi.msb_first).to(torch.uint8)
        for i in range(len(ins)):
            if not torch.equal(got[i], want[i]):
                raise FormatError(f"{model.path}: the byte module's digest of test vector {i + 1} of {len(ins)} is "
                                  f"{bytes(got[i].tolist()).hex()}, the config says {bytes(want[i].tolist()).hex()}; not written")
        done["test_vectors"] = len(ins)
    ref = check_reference(mod, model, bi, sorted({bi.min_len, (bi.min_len + bi.max_len) // 2, bi.max_len}), 34)
    if ref is not None:
        done["reference"] = ref
    return done


def check_reference(mod, model, bi, lengths, seed):
    """Where the config names a standard instance at full size
    (_reference), hashes a random message (seed) of each of lengths with
    byte module mod and compares the digests with the reference's, which
    catches a bit order, padding or preset that does not describe the
    model; raises FormatError naming the first that differs. Returns what
    was checked, or None without a reference."""
    ref = _reference(model, bi)
    if ref is None:
        return None
    name, fn = ref
    gen = torch.Generator().manual_seed(seed)
    msgs = [bytes(torch.randint(0, 256, (n,), generator=gen, dtype=torch.uint8).tolist()) for n in lengths]
    batch = torch.zeros(len(msgs), bi.max_len, dtype=torch.uint8)
    for i, m in enumerate(msgs):
        batch[i, :len(m)] = torch.tensor(list(m), dtype=torch.uint8)
    with torch.no_grad():
        got = mod(batch, torch.tensor(lengths))
    for m, g in zip(msgs, got):
        want = fn(m)
        if bytes(g.tolist()) != want:
            raise FormatError(f"{model.path}: the byte module's digest of a {len(m)}-byte message is {bytes(g.tolist()).hex()}, "
                              f"{name}'s {want.hex()}: the config's bit order, padding or preset does not describe the model; not written")
    return f"{name} on {len(msgs)} message{'s' if len(msgs) != 1 else ''} of {', '.join(map(str, lengths))} bytes"


# What marks a file as a byte module this package wrote (written_here):
# the TorchScript archive's extra file, and the ONNX model's producer
# name (ModelProto field 2, after field 1, ir_version).
PROVENANCE = "tcforge.json"
PRODUCER = b"tcforge_torch"


def written_here(path):
    """Whether path is a byte module this package wrote: a regular file
    (not a link) that is a TorchScript archive with its provenance or its
    DigestModule's code, or an ONNX model whose producer is tcforge_torch.
    A stale one may be replaced or removed; anything else is the user's."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    with open(path, "rb") as f:
        head = f.read(64)
        if head.startswith(b"PK"):
            try:
                names = zipfile.ZipFile(f).namelist()
            except zipfile.BadZipFile:
                return False
            return any(n.endswith("/extra/" + PROVENANCE) or n.endswith("/code/__torch__/tcforge_torch/digest.py") for n in names)
    # 0x08 <varint ir_version> 0x12 <len> producer
    if len(head) < 2 or head[0] != 0x08:
        return False
    i = 1
    while i < len(head) and head[i] & 0x80:
        i += 1
    rest = head[i + 1:]
    return rest[:2 + len(PRODUCER)] == bytes([0x12, len(PRODUCER)]) + PRODUCER


def save_torchscript(mod, path, provenance=None):
    """Writes mod as TorchScript: torch.jit.load(path) needs no tcforge.

    The encoder goes in traced (torch.jit.trace of its stock
    nn.TransformerEncoder: each layer's LayerNorm, multi-head attention
    and relu FFN as straight-line ops, shapes read at run time), the rest
    scripted (its checks and padding branch on the input). Scripted whole
    (every layer inlined with nn.TransformerEncoderLayer's fast-path
    branches), the first two calls, TorchScript's profiling executor
    profiling then optimising the graph, took: on the SHA3-256 module (48 layers) 37 s and 36 s, traced
    3.7 s and 1.0 s; on SHA-256 at 16 rounds (81 layers) 59 s and 112 s,
    traced 6.0 s and 6.6 s (docs/export.md, "First call")."""
    encoder = mod.encoder
    extra = {PROVENANCE: json.dumps(provenance or {}, sort_keys=True)}
    try:
        with torch.no_grad():
            mod.encoder = torch.jit.trace(encoder, torch.zeros(1, mod.tokens, mod.d_model))
        scripted = torch.jit.script(mod)
        atomic_write(path, lambda f: torch.jit.save(scripted, f, _extra_files=extra))
    finally:
        mod.encoder = encoder


def save_onnx(mod, path, provenance=None):
    """Writes mod as an ONNX model (opset 14) with inputs msg (uint8
    [batch, n]: n the message region, model input bytes less a SHA-2
    chaining value; zeros past each length) and lengths (int64 [batch])
    and output digest (uint8 [batch, digest bytes]): the graph of
    mod.digest, node for node (onnxgraph.py; ONNX has no exceptions, so
    the range checks are the caller's: a second output, valid bool
    [batch], says which lengths were in range, and an invalid row's digest
    is all zeros)."""
    from .onnxgraph import write_onnx

    meta = {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in (provenance or {}).items()}
    atomic_write(path, lambda f: write_onnx(mod, f, meta))
