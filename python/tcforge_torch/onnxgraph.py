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

__all__ = ["write_onnx", "write_decoder_onnx", "OPSET"]

OPSET = 14
IR_VERSION = 7

# TensorProto.DataType
FLOAT, UINT8, INT64, BOOL = 1, 2, 7, 9
# AttributeProto.AttributeType
A_FLOAT, A_INT, A_GRAPH, A_INTS = 1, 2, 5, 7


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
    """AttributeProto: an int, a float, a list of ints or a graph (an
    encoded GraphProto, bytes)."""
    if isinstance(value, bytes):
        return _bytes(1, name) + _bytes(6, value) + _int(20, A_GRAPH)
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
    """ValueInfoProto of a tensor; a str dim is symbolic; dims None: a
    tensor of any shape."""
    if dims is None:
        return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem)))
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem) + _bytes(2, shape)))


class _Graph:
    """Nodes and initializers in order; each op returns its output's name.
    A subgraph (sub(): a Loop's body) has nodes of its own and shares the
    main graph's initializers (a body reads them from the outer scope) and
    names."""

    def __init__(self, parent=None):
        self.nodes = []
        self.main = parent.main if parent else self
        if not parent:
            self.inits, self.count = [], 0

    def sub(self):
        return _Graph(self)

    def _name(self, prefix):
        self.main.count += 1
        return f"{prefix}{self.main.count}"

    def const(self, t, name=None):
        """An initializer (of the main graph): t is kept as it is (a view,
        say) and written when the file is, one tensor at a time."""
        name = name or self._name("c")
        self.main.inits.append((name, t.detach()))
        return name

    def op(self, op_type, *inputs, **attrs):
        return self.op_n(op_type, 1, *inputs, **attrs)[0]

    def op_n(self, op_type, n, *inputs, **attrs):
        """A node of n outputs; returns their names."""
        outs = [self._name("v") for _ in range(n)]
        node = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outs)
        node += _bytes(3, f"{op_type}_{outs[0]}") + _bytes(4, op_type)
        node += b"".join(_bytes(5, _attr(k, v)) for k, v in attrs.items())
        self.nodes.append(node)
        return outs

    def output(self, name, value):
        """Names value as a graph output: an Identity node."""
        self.nodes.append(_bytes(1, value) + _bytes(2, name) + _bytes(3, f"Identity_{name}") + _bytes(4, "Identity"))

    def encode(self, name, inputs, outputs):
        """This (sub)graph as a GraphProto without initializers: inputs and
        outputs are (name, elem type, dims) triples."""
        return (b"".join(_bytes(1, nd) for nd in self.nodes) + _bytes(2, name)
                + b"".join(_bytes(11, _value_info(*v)) for v in inputs) + b"".join(_bytes(12, _value_info(*v)) for v in outputs))

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


def _pad_graph(g, mod):
    """The padded input bytes (int64 [B, n]) of inputs msg and lengths, as
    digest.pad_message computes them from a byte module's buffers."""
    n, s0 = mod.n_bytes, mod.msg_start
    N = n - s0
    # Byte p of the model's input is message byte p − msg_start where 0 ≤
    # p − msg_start < length, plus the constant bytes, the suffix at p −
    # msg_start = length, and the bit length's bytes.
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
    return b


def _valid(g, mod):
    """valid (bool [B]): min_len ≤ length ≤ max_len, the lengths the
    TorchScript module takes (ONNX has no exceptions: a row out of range
    gets valid false and all-zero outputs, _masked)."""
    return g.op("And", g.op("GreaterOrEqual", "lengths", g.i64(mod.min_len)), g.op("LessOrEqual", "lengths", g.i64(mod.max_len)))


def _masked(g, valid, x):
    """x [B, …] (int64) with the rows that are not valid zeroed."""
    return g.op("Where", g.op("Unsqueeze", valid, g.i64([1])), x, g.i64(0))


def _write(g, out, name, inputs, outputs, metadata=None):
    """Writes main graph g as an ONNX model to out (a path or a binary
    file), streamed: the graph's length first (protobuf), then each
    initializer's bytes made and written one at a time; metadata (str →
    str) goes into the model's metadata_props."""
    nodes = b"".join(_bytes(1, nd) for nd in g.nodes) + _bytes(2, name)
    tail = b"".join(_bytes(11, _value_info(*v)) for v in inputs) + b"".join(_bytes(12, _value_info(*v)) for v in outputs)
    heads = [_tensor_head(n, t) for n, t in g.inits]
    inits_len = sum(len(_varint(5 << 3 | 2)) + len(_varint(len(h) + nb)) + len(h) + nb for h, nb in heads)
    graph_len = len(nodes) + inits_len + len(tail)
    # ModelProto.metadata_props (14): StringStringEntryProto {key 1, value 2}.
    props = b"".join(_bytes(14, _bytes(1, k) + _bytes(2, v)) for k, v in sorted((metadata or {}).items()))
    f = open(out, "wb") if isinstance(out, (str, bytes, os.PathLike)) else out
    try:
        f.write(_int(1, IR_VERSION) + _bytes(2, "tcforge_torch") + _varint(7 << 3 | 2) + _varint(graph_len) + nodes)
        for (n, t), (h, nb) in zip(g.inits, heads):
            f.write(_varint(5 << 3 | 2) + _varint(len(h) + nb) + h)
            f.write(_raw(t))
        f.write(tail + _bytes(8, _bytes(1, "") + _int(2, OPSET)) + props)
    finally:
        if f is not out:
            f.close()


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
    b = _pad_graph(g, mod)
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
    valid = _valid(g, mod)
    g.output("digest", g.op("Cast", _masked(g, valid, packed), to=UINT8))
    g.output("valid", valid)
    _write(g, out, "tcforge_byte_module", [("msg", UINT8, ["batch", n - s0]), ("lengths", INT64, ["batch"])],
           [("digest", UINT8, ["batch", mod.out_bits // 8]), ("valid", BOOL, ["batch"])], metadata)


def write_decoder_onnx(mod, out, metadata=None):
    """Writes DecoderDigestModule mod as an ONNX model to out (a path or a
    binary file): inputs msg and lengths (as write_onnx's), outputs digest
    (uint8 [batch, digest bytes]), valid (bool [batch], as write_onnx's: a
    row out of range gets all-zero digest and tokens) and tokens (int64
    [batch, generated]: the working, then the digest tokens). Greedy
    decoding is one Loop over positions 0 … positions − 2: iteration p
    feeds prompt token p (p < prompt) or the argmax of the iteration
    before, runs that one position through every layer against the keys
    and values of the positions before it (carried from iteration to
    iteration, one position longer each: Concat; the keys stored
    transposed, [B, nhead, head dim, p]), and emits its argmax (the Loop's
    scan output). The body reads the weights from the main graph (outer
    scope); metadata (str → str) goes into the model's metadata_props."""
    g = _Graph()
    dec = mod.decoder
    P0, G, D = mod.prompt, mod.generated, mod.digest
    M = dec.positions - 1
    n = mod.n_bytes
    # The prompt: the padded bytes' input bits (byte_bits), packed 8 a
    # token by prompt_index (index 8n: a bit always 0).
    b = _pad_graph(g, mod)
    bits = g.op("Reshape", g.op("Gather", g.const(mod.byte_bits.clone()), b, axis=0), g.i64([0, 8 * n]))  # [B, 8n]
    idx = mod.prompt_index.clone()
    inside = (idx < 8 * n).to(torch.int64)
    bits = g.op("Mul", g.op("Gather", bits, g.const(torch.where(idx < 8 * n, idx, torch.zeros_like(idx))), axis=1), g.const(inside))
    prompt = g.sum_last(g.op("Mul", g.op("Reshape", bits, g.i64([0, P0, 8])), g.i64([1 << k for k in range(8)])), [0, P0])  # [B, P0]
    # The loop's initial state: the first prompt token, empty caches.
    batch = g.op("Gather", g.op("Shape", "msg"), g.i64([0]), axis=0)  # [1]
    init = [g.op("Gather", prompt, g.i64(0), axis=1)]
    for layer, H in zip(dec.layers, dec.heads):
        e = dec.d // H
        init.append(g.op("ConstantOfShape", g.op("Concat", batch, g.i64([H, e, 0]), axis=0)))  # keysᵀ
        init.append(g.op("ConstantOfShape", g.op("Concat", batch, g.i64([H, 0, e]), axis=0)))  # values
    body = g.sub()
    it, cond = body._name("it"), body._name("cond")
    carried = [body._name("carried") for _ in init]
    tok = body.op("Where", body.op("Less", it, body.i64(P0)),
                  body.op("Gather", prompt, body.op("Min", it, body.i64(P0 - 1)), axis=1), carried[0])
    x = body.op("Add", body.op("Gather", body.const(dec.tok_embed.weight.detach()), tok, axis=0),
                body.op("Gather", body.const(dec.pos_embed.weight.detach()), it, axis=0))  # [B, d]
    kv = []
    for i, (layer, H) in enumerate(zip(dec.layers, dec.heads)):
        d, e = dec.d, dec.d // H
        att = layer.self_attn
        W, bias = att.in_proj_weight.detach(), att.in_proj_bias.detach()
        y = body.layer_norm(x, layer.norm1)
        q = body.op("Mul", body.linear(y, W[:d], bias[:d]), body.const(torch.tensor(1.0 / float(e) ** 0.5, dtype=torch.float32)))
        kt = body.op("Concat", carried[1 + 2 * i], body.op("Reshape", body.linear(y, W[d:2 * d], bias[d:2 * d]), body.i64([0, H, e, 1])), axis=3)
        v = body.op("Concat", carried[2 + 2 * i], body.op("Reshape", body.linear(y, W[2 * d:], bias[2 * d:]), body.i64([0, H, 1, e])), axis=2)
        s = body.op("MatMul", body.op("Reshape", q, body.i64([0, H, 1, e])), kt)  # [B, H, 1, p + 1]
        o = body.op("Reshape", body.op("MatMul", body.op("Softmax", s, axis=-1), v), body.i64([0, d]))
        x = body.op("Add", x, body.linear(o, att.out_proj.weight, att.out_proj.bias))
        h = body.op("Relu", body.linear(body.layer_norm(x, layer.norm2), layer.linear1.weight, layer.linear1.bias))
        x = body.op("Add", x, body.linear(h, layer.linear2.weight, layer.linear2.bias))
        kv += [kt, v]
    if isinstance(dec.norm_f, torch.nn.LayerNorm):
        x = body.layer_norm(x, dec.norm_f)
    # The argmax kept, [B, 1], then reshaped to [B]: as with ReduceSum
    # (sum_last), ONNX Runtime returns an empty input unreduced.
    nxt = body.op("Reshape", body.op("ArgMax", body.linear(x, dec.lm_head.weight, dec.lm_head.bias), axis=-1, keepdims=1), body.i64([0]))  # [B]
    results = [body.op("Identity", cond), nxt] + kv + [body.op("Identity", nxt)]
    names = [body._name("out") for _ in results]
    for name, r in zip(names, results):
        body.output(name, r)
    graph = body.encode("greedy_step", [(it, INT64, []), (cond, BOOL, [])] + [(c, INT64 if j == 0 else FLOAT, None) for j, c in enumerate(carried)],
                        [(names[0], BOOL, [])] + [(nm, INT64 if j == 0 else FLOAT, None) for j, nm in enumerate(names[1:-1])] + [(names[-1], INT64, None)])
    outs = g.op_n("Loop", len(init) + 1, g.i64(M), g.const(torch.tensor(True)), *init, body=graph)
    valid = _valid(g, mod)
    gen = g.op("Slice", g.op("Transpose", outs[-1], perm=[1, 0]), g.i64([P0 - 1]), g.i64([M]), g.i64([1]))  # [B, G]
    gen = _masked(g, valid, gen)
    dig = g.op("Slice", gen, g.i64([G - D]), g.i64([G]), g.i64([1]))  # [B, D]
    bits = g.op("Mod", g.op("Div", g.op("Unsqueeze", dig, g.i64([2])), g.i64([1 << k for k in range(8)])), g.i64(2))  # [B, D, 8]
    bits = g.op("Reshape", g.op("Gather", g.op("Reshape", bits, g.i64([0, 8 * D])), g.const(mod.out_perm.clone()), axis=1),
                g.i64([0, mod.out_bits // 8, 8]))
    packed = g.sum_last(g.op("Mul", bits, g.const(mod.bit_weights.clone())), [0, mod.out_bits // 8])
    g.output("digest", g.op("Cast", packed, to=UINT8))
    g.output("valid", valid)
    g.output("tokens", gen)
    _write(g, out, "tcforge_decoder", [("msg", UINT8, ["batch", n - mod.msg_start]), ("lengths", INT64, ["batch"])],
           [("digest", UINT8, ["batch", mod.out_bits // 8]), ("valid", BOOL, ["batch"]), ("tokens", INT64, ["batch", G])], metadata)
