"""The byte module as an ONNX file, written directly (no onnx package,
no torch.onnx exporter).

PyTorch 1.13's exporter takes time quadratic in the graph's size (a
41-layer SHA-256 model: 110 s; 320 layers: hours), so write_onnx builds
the graph of DigestModule.digest itself, node for node from the module's
own parameters, and encodes the protobuf by hand (the few messages of
onnx.proto it needs: ModelProto, GraphProto, NodeProto, AttributeProto,
TensorProto, ValueInfoProto). Opset 14, standard operators only; time
and size linear in the layers.
"""

import os
import struct

import torch

__all__ = ["write_onnx", "OPSET"]

OPSET = 14
IR_VERSION = 7

# TensorProto.DataType
FLOAT, UINT8, INT64, BOOL = 1, 2, 7, 9
# AttributeProto.AttributeType
A_FLOAT, A_INT, A_INTS = 1, 2, 7


def _varint(n):
    n &= (1 << 64) - 1  # negative int64: two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _int(field, n):
    return _varint(field << 3) + _varint(n)


def _bytes(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _float(field, x):
    return _varint(field << 3 | 5) + struct.pack("<f", x)


def _attr(name, value):
    """AttributeProto: an int, a float or a list of ints."""
    if isinstance(value, float):
        return _bytes(1, name) + _float(2, value) + _int(20, A_FLOAT)
    if isinstance(value, int):
        return _bytes(1, name) + _int(3, value) + _int(20, A_INT)
    return _bytes(1, name) + b"".join(_int(8, v) for v in value) + _int(20, A_INTS)


def _tensor_head(name, t):
    """TensorProto of a float32, int64, uint8 or bool tensor up to its raw
    data (little-endian), which follows: (the head, the data's length)."""
    dt = {torch.float32: FLOAT, torch.int64: INT64, torch.uint8: UINT8, torch.bool: BOOL}[t.dtype]
    nbytes = t.numel() * t.element_size()
    head = b"".join(_int(1, d) for d in t.shape) + _int(2, dt) + _bytes(8, name) + _varint(9 << 3 | 2) + _varint(nbytes)
    return head, nbytes


def _raw(t):
    return t.detach().contiguous().numpy().tobytes() if t.numel() else b""


def _value_info(name, elem, dims):
    """ValueInfoProto of a tensor; a str dim is symbolic."""
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem) + _bytes(2, shape)))


class _Graph:
    """Nodes and initializers in order; each op returns its output's name."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, t, name=None):
        """An initializer: t is kept as it is (a view, say) and written
        when the file is, one tensor at a time."""
        self.count += 1
        name = name or f"c{self.count}"
        self.inits.append((name, t.detach()))
        return name

    def op(self, op_type, *inputs, **attrs):
        self.count += 1
        out = f"v{self.count}"
        node = b"".join(_bytes(1, i) for i in inputs) + _bytes(2, out) + _bytes(3, f"{op_type}_{self.count}") + _bytes(4, op_type)
        node += b"".join(_bytes(5, _attr(k, v)) for k, v in attrs.items())
        self.nodes.append(node)
        return out

    # Helpers over op.
    def linear(self, x, weight, bias=None):
        """x Wᵀ + b for an nn.Linear's weight [out, in] (and bias)."""
        y = self.op("MatMul", x, self.const(weight.detach().T))
        return self.op("Add", y, self.const(bias.detach().to(torch.float32))) if bias is not None else y

    def layer_norm(self, x, ln):
        """nn.LayerNorm over the last dimension (biased variance)."""
        mean = self.op("ReduceMean", x, axes=[-1], keepdims=1)
        xc = self.op("Sub", x, mean)
        var = self.op("ReduceMean", self.op("Mul", xc, xc), axes=[-1], keepdims=1)
        eps = self.const(torch.tensor(float(ln.eps), dtype=torch.float32))
        y = self.op("Div", xc, self.op("Sqrt", self.op("Add", var, eps)))
        return self.op("Add", self.op("Mul", y, self.const(ln.weight.detach())), self.const(ln.bias.detach()))

    def sum_last(self, x, shape):
        """x summed over its last dimension, reshaped to shape (0: the
        batch). Not ReduceSum(keepdims=0) alone: ONNX Runtime 1.30 returns
        an empty input unreduced, which breaks the shapes after it; kept,
        the reduced dimension is reshaped away whatever the batch."""
        return self.op("Reshape", self.op("ReduceSum", x, self.i64([-1]), keepdims=1), self.i64(shape))

    def i64(self, values):
        return self.const(torch.tensor(values, dtype=torch.int64))


def _encoder_layer(g, x, layer, T, d, H):
    """One norm_first nn.TransformerEncoderLayer (relu, no dropout) on x [B, T, d]."""
    e = d // H
    att = layer.self_attn
    W, b = att.in_proj_weight.detach(), att.in_proj_bias.detach()
    y = g.layer_norm(x, layer.norm1)
    heads = g.i64([0, T, H, e])
    q, k, v = (g.op("Reshape", g.linear(y, W[j * d:(j + 1) * d], b[j * d:(j + 1) * d]), heads) for j in range(3))
    q = g.op("Mul", g.op("Transpose", q, perm=[0, 2, 1, 3]), g.const(torch.tensor(float(e) ** -0.5, dtype=torch.float32)))
    k = g.op("Transpose", k, perm=[0, 2, 3, 1])
    v = g.op("Transpose", v, perm=[0, 2, 1, 3])
    a = g.op("Softmax", g.op("MatMul", q, k), axis=-1)
    o = g.op("Reshape", g.op("Transpose", g.op("MatMul", a, v), perm=[0, 2, 1, 3]), g.i64([0, T, d]))
    x = g.op("Add", x, g.linear(o, att.out_proj.weight, att.out_proj.bias))
    h = g.op("Relu", g.linear(g.layer_norm(x, layer.norm2), layer.linear1.weight, layer.linear1.bias))
    return g.op("Add", x, g.linear(h, layer.linear2.weight, layer.linear2.bias))


def write_onnx(mod, out, metadata=None):
    """Writes DigestModule mod's digest as an ONNX model to out (a path or
    a binary file): inputs msg (uint8 [batch, n − msg_start], zeros past
    each length) and lengths (int64 [batch]), outputs digest (uint8
    [batch, digest bytes]) and valid (bool [batch]: the length in the
    module's range; ONNX has no exceptions, so a row out of range gets
    valid false and an all-zero digest, never the digest of another
    input). Each node computes what the module's step does; metadata
    (str → str) goes into the model's metadata_props."""
    g = _Graph()
    n, s0, T, k, d = mod.n_bytes, mod.msg_start, mod.tokens, mod.slots, mod.d_model
    N = n - s0
    # Padding: byte p of the model's input is message byte p − msg_start
    # where 0 ≤ p − msg_start < length, plus the constant bytes, the suffix
    # at p − msg_start = length, and the bit length's bytes.
    m = g.op("Cast", "msg", to=INT64)
    m = g.op("Gather", m, g.i64([min(max(p - s0, 0), N - 1) for p in range(n)]), axis=1)  # [B, n]
    rel = g.i64([[p - s0 for p in range(n)]])
    length = g.op("Unsqueeze", "lengths", g.i64([1]))  # [B, 1]
    inside = g.op("And", g.const(torch.tensor([[p >= s0 for p in range(n)]])), g.op("Less", rel, length))
    b = g.op("Add", g.op("Where", inside, m, g.i64(0)), g.const(mod.const_bytes.clone()))
    if mod.suffix >= 0:
        b = g.op("Add", b, g.op("Mul", g.op("Cast", g.op("Equal", rel, length), to=INT64), g.i64(mod.suffix)))
    if mod.length_bytes > 0:
        field = g.op("Mod", g.op("Div", g.op("Mul", length, g.i64(8)), g.const(mod.length_div.clone())), g.i64(256))
        b = g.op("Add", b, g.op("Mul", field, g.const(mod.length_mask.clone())))
    # Byte tokens, then attention gathers each slot's byte.
    tokens = g.op("Add", g.op("Gather", g.const(mod.byte_embedding.weight.detach()), b, axis=0), g.const(mod.byte_position.detach()))
    mha = mod.gather
    width = mha.embed_dim
    Wg, bg = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
    qT = g.const(((mod.gather_queries.detach() @ Wg[:width].T + bg[:width]) * width ** -0.5).T.contiguous())  # [width, S]
    keys = g.linear(tokens, Wg[width:2 * width], bg[width:2 * width])  # [B, n, width]
    values = g.linear(tokens, Wg[2 * width:], bg[2 * width:])
    # Scores as keys · qᵀ, [B, n, S] (a constant right operand: ONNX
    # Runtime cannot broadcast a constant left one over an empty batch),
    # softmax over the bytes, then [B, S, n]: one-hot rows.
    att = g.op("Transpose", g.op("Softmax", g.op("MatMul", keys, qT), axis=1), perm=[0, 2, 1])
    got = g.linear(g.op("MatMul", att, values), mha.out_proj.weight, mha.out_proj.bias)
    bits8 = g.op("Reshape", g.op("MatMul", got, g.const(torch.eye(width)[:, :8].contiguous())), g.i64([0, T, k, 8]))
    token_bits = g.sum_last(g.op("Mul", bits8, g.const(mod.select.detach())), [0, T, k])
    # The encoder and the readout.
    x = g.op("Add", g.linear(token_bits, mod.input_map.weight), g.const(mod.position.detach()))
    for layer in mod.encoder.layers:
        x = _encoder_layer(g, x, layer, T, d, layer.self_attn.num_heads)
    r = g.linear(x, mod.readout.weight, mod.readout.bias)
    fired = g.op("Cast", g.op("GreaterOrEqual", r, g.const(torch.tensor(0.0))), to=INT64)
    fired = g.op("Reshape", fired, g.i64([0, T * mod.readout.out_features]))  # no −1: an empty batch has no size to infer
    bits = g.op("Reshape", g.op("Gather", fired, g.const(mod.out_perm.clone()), axis=1), g.i64([0, mod.out_bits // 8, 8]))
    packed = g.sum_last(g.op("Mul", bits, g.const(mod.bit_weights.clone())), [0, mod.out_bits // 8])
    # valid: min_len ≤ length ≤ max_len (a length the TorchScript module
    # refuses); an invalid row's digest is all zeros.
    valid = g.op("And", g.op("GreaterOrEqual", "lengths", g.i64(mod.min_len)), g.op("LessOrEqual", "lengths", g.i64(mod.max_len)))
    packed = g.op("Where", g.op("Unsqueeze", valid, g.i64([1])), packed, g.i64(0))
    digest = g.op("Cast", packed, to=UINT8)
    g.nodes.append(_bytes(1, digest) + _bytes(2, "digest") + _bytes(3, "Identity_out") + _bytes(4, "Identity"))
    g.nodes.append(_bytes(1, valid) + _bytes(2, "valid") + _bytes(3, "Identity_valid") + _bytes(4, "Identity"))
    # The file, streamed: the graph's length first (protobuf), then each
    # initializer's bytes made and written one at a time.
    nodes = b"".join(_bytes(1, nd) for nd in g.nodes) + _bytes(2, "tcforge_byte_module")
    tail = _bytes(11, _value_info("msg", UINT8, ["batch", N])) + _bytes(11, _value_info("lengths", INT64, ["batch"]))
    tail += _bytes(12, _value_info("digest", UINT8, ["batch", mod.out_bits // 8])) + _bytes(12, _value_info("valid", BOOL, ["batch"]))
    heads = [_tensor_head(name, t) for name, t in g.inits]
    inits_len = sum(len(_varint(5 << 3 | 2)) + len(_varint(len(h) + nb)) + len(h) + nb for h, nb in heads)
    graph_len = len(nodes) + inits_len + len(tail)
    # ModelProto.metadata_props (14): StringStringEntryProto {key 1, value 2}.
    props = b"".join(_bytes(14, _bytes(1, k) + _bytes(2, v)) for k, v in sorted((metadata or {}).items()))
    f = open(out, "wb") if isinstance(out, (str, bytes, os.PathLike)) else out
    try:
        f.write(_int(1, IR_VERSION) + _bytes(2, "tcforge_torch") + _varint(7 << 3 | 2) + _varint(graph_len) + nodes)
        for (name, t), (h, nb) in zip(g.inits, heads):
            f.write(_varint(5 << 3 | 2) + _varint(len(h) + nb) + h)
            f.write(_raw(t))
        f.write(tail + _bytes(8, _bytes(1, "") + _int(2, OPSET)) + props)
    finally:
        if f is not out:
            f.close()
