"""Decoders (tokens as time): a causal language model over a byte
vocabulary that writes a circuit's working, then its digest
(docs/export.md, "Decoders").

tcforge_torch.load of a config with "decoder" gives a DecoderModel; its
module() is the model as stock PyTorch modules, loaded with
load_state_dict(strict=True):

    tok_embed  nn.Embedding(vocab, d)          pos_embed  nn.Embedding(positions, d)
    layers     nn.ModuleList of nn.TransformerEncoderLayer(d, nhead, dim_feedforward,
               dropout=0.0, activation="relu", batch_first=True, norm_first=True,
               layer_norm_eps), each layer its own dim_feedforward
    norm_f     nn.LayerNorm(d, eps) (nn.Identity where the model has none)
    lm_head    nn.Linear(d, vocab)

StockDecoder.forward(tokens) runs the layers over a whole sequence with a
causal mask (src_mask: GPT's block) and returns every position's logits:
one pass over the prompt and the expected tokens is teacher forcing, and
when every position's argmax is the next token it is exactly what greedy
decoding writes. StockDecoder.generate(context, n) decodes greedily with a
KV cache built from the same layers' submodules (norm1, self_attn's
in_proj and out_proj, norm2, linear1, linear2): a new position's keys and
values go into the cache, its query attends to the cache, so a token
costs one position's pass (recomputing the sequence would cost its
length: 1,298 positions for SHA-256). The equations are the stock layer's
(docs/export.md, "The forward pass"), the queries scaled by 1/sqrt(head
dim) before the product as nn.MultiheadAttention does.

DecoderDigestModule wraps it as a byte module (bytes in, digest out; the
working on request), written as TorchScript (save_torchscript) and ONNX
(onnxgraph.write_decoder_onnx: the greedy loop as an ONNX Loop).
"""

import json
import warnings
from typing import List, Optional, Tuple

import torch
from torch import nn

from . import (FormatError, _build_checked, _check_layer, _dense, _emulated_layer, _eps, _layer_state, _matrices, _needer, _round, _want,
               atomic_write)
from .digest import PROVENANCE, _byte_interface, _dtype_name, _interface_buffers, _pack, check_message, check_reference, pad_message

__all__ = ["DecoderModel", "StockDecoder", "DecoderDigestModule", "decoder_module", "check_module", "save_torchscript", "save_onnx"]

# The most bytes the score matrices of one teacher-forced pass through the
# stock layers' forward may take (batch × heads × positions² float32);
# past it the pass runs position by position with the KV cache.
SCORES_BYTES = 1 << 30


class StockDecoder(nn.Module):
    """A decoder of stock modules (module doc); layers lists (nhead,
    dim_feedforward, layer_norm_eps) a layer; norm_eps None: no final
    norm."""

    def __init__(self, vocab: int, positions: int, d: int, layers, norm_eps: Optional[float]):
        super().__init__()
        self.vocab, self.positions, self.d = vocab, positions, d
        self.tok_embed = nn.Embedding(vocab, d)
        self.pos_embed = nn.Embedding(positions, d)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, h, f, dropout=0.0, activation="relu", batch_first=True,
                                                                norm_first=True, layer_norm_eps=eps) for h, f, eps in layers])
        self.norm_f = nn.LayerNorm(d, eps=norm_eps) if norm_eps is not None else nn.Identity()
        self.lm_head = nn.Linear(d, vocab)
        self.heads: List[int] = [h for h, _, _ in layers]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [B, T, vocab] of tokens [B, T] (int64), every position
        attending to itself and the positions before it."""
        self._check_context(tokens, 0)
        T = tokens.shape[1]
        x = self.tok_embed(tokens) + self.pos_embed.weight[:T]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)  # True: may not attend
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        return self.lm_head(self.norm_f(x))

    def _check_context(self, context: torch.Tensor, n: int):
        """Raises ValueError naming what is wrong with context (int64
        [batch, t], tokens in the vocabulary) followed by n generated
        tokens: t ≥ 1 and t + n within the model's positions."""
        if context.dtype != torch.long:
            raise ValueError("decoder: the context must be int64 [batch, tokens], got dtype " + _dtype_name(context.dtype))
        if context.dim() != 2:
            raise ValueError("decoder: the context must be int64 [batch, tokens], got " + str(context.dim()) + " dimensions")
        t = context.shape[1]
        if t < 1 or n < 0:
            raise ValueError("decoder: a context of " + str(t) + " tokens and " + str(n) + " to generate")
        if t + n > self.positions:
            raise ValueError("decoder: a context of " + str(t) + " positions and " + str(n) + " to generate is past the model's " + str(self.positions) + " positions")
        if context.shape[0] > 0 and (int(context.min()) < 0 or int(context.max()) >= self.vocab):
            raise ValueError("decoder: a context token outside the vocabulary 0 … " + str(self.vocab - 1))

    def step(self, tok: torch.Tensor, pos: int, keys: List[torch.Tensor], values: List[torch.Tensor]) -> torch.Tensor:
        """Logits [B, vocab] at position pos of tokens tok [B], the earlier
        positions' keys and values in the caches (layer i: [B, nhead, ≥ pos
        + 1, head dim]), which get this position's."""
        B = tok.shape[0]
        x = self.tok_embed(tok) + self.pos_embed.weight[pos]
        i = 0
        for layer in self.layers:
            att = layer.self_attn
            H = self.heads[i]
            d = self.d
            e = d // H
            qkv = torch.nn.functional.linear(layer.norm1(x), att.in_proj_weight, att.in_proj_bias)
            q = (qkv[:, :d] / (float(e) ** 0.5)).reshape(B, H, 1, e)
            keys[i][:, :, pos] = qkv[:, d:2 * d].reshape(B, H, e)
            values[i][:, :, pos] = qkv[:, 2 * d:].reshape(B, H, e)
            s = torch.matmul(q, keys[i][:, :, :pos + 1].transpose(-2, -1))  # [B, H, 1, pos + 1]
            o = torch.matmul(torch.softmax(s, dim=-1), values[i][:, :, :pos + 1]).reshape(B, d)
            x = x + att.out_proj(o)
            x = x + layer.linear2(torch.relu(layer.linear1(layer.norm2(x))))
            i += 1
        return self.lm_head(self.norm_f(x))

    def generate(self, context: torch.Tensor, n: int) -> torch.Tensor:
        """The n tokens [B, n] (int64) greedy decoding writes after context
        [B, t] (t ≥ 1, t + n at most the model's positions)."""
        return self._decode(context, n, False)[0]

    @torch.jit.export
    def forced(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits [B, T, vocab] of tokens [B, T] computed position by
        position with the KV cache (teacher forcing without the T × T
        scores of forward: what teacher_forced runs on long contexts)."""
        return self._decode(tokens, 0, True)[1]

    def _decode(self, context: torch.Tensor, n: int, keep: bool) -> Tuple[torch.Tensor, torch.Tensor]:
        """Greedy decoding of n tokens after context; keep: also the logits
        at every context position (n = 0: teacher forcing)."""
        self._check_context(context, n)
        B, t = context.shape[0], context.shape[1]
        P = t + n - 1 if n > 0 else t  # positions the pass visits
        dt = self.pos_embed.weight.dtype
        keys: List[torch.Tensor] = []
        values: List[torch.Tensor] = []
        for h in self.heads:
            keys.append(torch.zeros(B, h, max(P, 1), self.d // h, dtype=dt))
            values.append(torch.zeros(B, h, max(P, 1), self.d // h, dtype=dt))
        out = torch.zeros(B, n, dtype=torch.long)
        kept = torch.zeros(B, t if keep else 0, self.vocab, dtype=dt)
        tok = context[:, 0]
        for p in range(P):
            if p < t:
                tok = context[:, p]
            logits = self.step(tok, p, keys, values)
            if keep and p < t:
                kept[:, p] = logits
            if n > 0 and p >= t - 1:
                tok = torch.argmax(logits, dim=-1)
                out[:, p - t + 1] = tok
        return out, kept


class DecoderModel:
    """A loaded decoder export: its stock modules (module()), token maps
    and the checks of docs/export.md ("Decoders")."""

    def __init__(self, config_path, cfg, check=True):
        self.path, self.cfg = config_path, cfg
        self.arch = cfg.get("architecture", "")
        self.d = _want(config_path, cfg, "d_model", int)
        if self.d < 1:
            raise FormatError(f"{config_path}: d_model {self.d}: want at least 1")
        for key, kind in (("blocks", list), ("tensors", dict), ("decoder", dict)):
            _want(config_path, cfg, key, kind)
        self._modules = {}
        _build_checked(self, config_path, cfg, check)

    def _build(self, path, cfg, weights, raw, meta):
        self.W = _matrices(path, cfg, weights, raw, meta)
        self.need = need = _needer(path, self.W)
        dc = cfg["decoder"]
        w = "decoder"
        for key in ("vocab", "positions", "prompt", "working", "digest"):
            setattr(self, key, _want(path, dc, key, int, w))
        self.generated = self.working + self.digest
        if self.vocab < 256 or self.prompt < 1 or self.working < 0 or self.digest < 1 or self.positions != self.prompt + self.generated:
            raise FormatError(f"{path}: decoder of vocabulary {self.vocab}, {self.positions} positions, {self.prompt} prompt, "
                              f"{self.working} working and {self.digest} digest tokens: want a vocabulary of at least 256 and positions = prompt + working + digest")
        if cfg.get("tokens") != self.positions:
            raise FormatError(f"{path}: tokens {cfg.get('tokens')!r}, the decoder has {self.positions} positions")
        need(_want(path, dc, "tok_embed", str, w), self.vocab, self.d)
        need(_want(path, dc, "pos_embed", str, w), self.positions, self.d)
        head = _want(path, dc, "head", dict, w)
        need(_want(path, head, "weight", str, "decoder.head"), self.vocab, self.d)
        need(_want(path, head, "bias", str, "decoder.head"), 1, self.vocab)
        norm = dc.get("norm")
        self.norm_eps = None
        if norm is not None:
            need(_want(path, norm, "weight", str, "decoder.norm"), 1, self.d)
            need(_want(path, norm, "bias", str, "decoder.norm"), 1, self.d)
            self.norm_eps = _eps(path, norm.get("eps"), "decoder.norm.eps", False)
        self.prompt_bits = self._bit_map(dc, "prompt_bits", self.prompt)
        self.digest_bits = self._bit_map(dc, "digest_bits", self.digest)
        self.steps = _want(path, dc, "step", list, w)
        if len(self.steps) != self.generated:
            raise FormatError(f"{path}: decoder.step has {len(self.steps)} entries for {self.generated} generated tokens")
        self.names = dc.get("names") or [f"token {t}" for t in range(self.generated)]
        if len(self.names) != self.generated:
            raise FormatError(f"{path}: decoder.names has {len(self.names)} entries for {self.generated} generated tokens")
        self.layers = []  # (nhead, dim_feedforward, layer_norm_eps) a layer
        for i, blk in enumerate(cfg["blocks"]):
            layer = blk.get("layer") if isinstance(blk, dict) else None
            if not layer:
                raise FormatError(f"{path}: block {i} is not a stock layer: a decoder's blocks are all \"layer\"")
            H = _want(path, layer, "nhead", int, f"blocks[{i}].layer")
            eps = _eps(path, layer.get("layer_norm_eps"), f"blocks[{i}].layer.layer_norm_eps", False)
            if H < 1 or self.d % H:
                raise FormatError(f"{path}: layer {i}: nhead {H} does not divide d_model {self.d}")
            F = _check_layer(path, i, layer, need, self.d)
            if layer.get("dim_feedforward", F) != F:
                raise FormatError(f"{path}: layer {i}: dim_feedforward {layer.get('dim_feedforward')}, its linear1 has {F} rows")
            self.layers.append((H, F, eps))
        if not self.layers:
            raise FormatError(f"{path}: a decoder with no layers")
        # The circuit's input and output bits (the largest index mapped).
        self.inputs = max([int(b) for b in self.prompt_bits] + [-1]) + 1
        self.outputs = max([int(b) for b in self.digest_bits] + [-1]) + 1
        attrs = cfg.get("attrs") or {}
        self.head_scale = float(attrs.get("head_scale", 1))

    def test_vectors(self):
        """The config's test vectors as (inputs uint8 [k, inputs], outputs
        uint8 [k, outputs], sequences int64 [k, positions]: prompt then
        the tokens the model must generate), each checked to be of the
        model's widths and the prompt the inputs' (k = 0 where the config
        has none)."""
        vecs = self.cfg.get("test_vectors") or []
        if not isinstance(vecs, list):
            raise FormatError(f"{self.path}: test_vectors is {type(vecs).__name__}, want a list")
        ins, outs, seqs = [], [], []
        for i, v in enumerate(vecs):
            if not isinstance(v, dict) or not all(isinstance(v.get(k), str) for k in ("input", "output")) or not all(isinstance(v.get(k), list) for k in ("prompt", "tokens")):
                raise FormatError(f"{self.path}: test vector {i + 1}: want {{\"input\": bits, \"output\": bits, \"prompt\": tokens, \"tokens\": tokens}}")
            for key, n in (("input", self.inputs), ("output", self.outputs)):
                if len(v[key]) != n or set(v[key]) - {"0", "1"}:
                    raise FormatError(f"{self.path}: test vector {i + 1}: {key} is not {n} characters of 0/1")
            seq = v["prompt"] + v["tokens"]
            if len(v["prompt"]) != self.prompt or len(seq) != self.positions or not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < self.vocab for t in seq):
                raise FormatError(f"{self.path}: test vector {i + 1}: want {self.prompt} prompt and {self.generated} generated tokens in [0, {self.vocab})")
            ins.append([int(c) for c in v["input"]])
            outs.append([int(c) for c in v["output"]])
            seqs.append(seq)
        k = len(ins)
        ins = torch.tensor(ins, dtype=torch.uint8).reshape(k, self.inputs)
        seqs = torch.tensor(seqs, dtype=torch.long).reshape(k, self.positions)
        if k and not torch.equal(self.prompt_tokens(ins), seqs[:, :self.prompt]):
            raise FormatError(f"{self.path}: a test vector's prompt is not its input bits through decoder.prompt_bits")
        return ins, torch.tensor(outs, dtype=torch.uint8).reshape(k, self.outputs), seqs

    def check_vectors(self):
        """Checks the config's test vectors against the model and raises
        FormatError naming the first it does not reproduce: every vector's
        prompt (its input bits through prompt_bits) and digest (its tokens'
        digest bits, the output), and the first vector's every token in
        one teacher-forced float32 pass (one: a full-size decoder's pass
        takes seconds). Returns how many vectors' tokens ran."""
        ins, outs, seqs = self.test_vectors()
        if not len(ins):
            return 0
        if not torch.equal(self.output_bits(seqs[:, self.prompt:]), outs):
            raise FormatError(f"{self.path}: a test vector's digest tokens are not its output bits through decoder.digest_bits")
        pred, _ = self.teacher_forced(seqs[:1])
        bad = (pred[0] != seqs[0, self.prompt:]).nonzero().flatten().tolist()
        if bad:
            t = bad[0]
            raise FormatError(f"{self.path}: test vector 1: generated token {t} ({self.names[t]}) is {int(pred[0, t])}, the config says "
                              f"{int(seqs[0, self.prompt + t])} ({len(bad)} of {self.generated} differ): the model does not compute what its "
                              f"config says (weights or settings edited after the export?); refused")
        return 1

    def run(self, bits, batch=16, dtype=torch.float32):
        """Output bits (uint8 [n, outputs]) of circuit input bits (0/1 [n,
        inputs]) by greedy decoding, batch sequences at a time, the stock
        modules in dtype (float32, float64 or bfloat16: PyTorch 1.13 has
        no CPU float16 kernels for these layers)."""
        if dtype not in (torch.float32, torch.float64, torch.bfloat16):
            raise ValueError(f"{self.path}: a decoder runs in float32, float64 or bfloat16, not {dtype}")
        bits = torch.as_tensor(bits)
        if bits.dim() != 2 or bits.shape[1] != self.inputs:
            raise ValueError(f"{self.path}: want bits of shape [n, {self.inputs}], got {list(bits.shape)}")
        if bits.dtype.is_floating_point or bits.dtype.is_complex:
            raise ValueError(f"{self.path}: want input bits 0 or 1 (an integer or bool tensor), got dtype {bits.dtype}")
        if bool(((bits != 0) & (bits != 1)).any()):
            raise ValueError(f"{self.path}: want input bits 0 or 1, got values {sorted(set(bits.flatten().tolist()) - {0, 1})[:3]}")
        p = self.prompt_tokens(bits)
        out = [torch.zeros(0, self.generated, dtype=torch.long)]
        with torch.no_grad():
            for lo in range(0, len(p), batch):
                out.append(self.module(dtype).generate(p[lo:lo + batch], self.generated))
        return self.output_bits(torch.cat(out))

    def _bit_map(self, dc, key, tokens):
        bits = _want(self.path, dc, key, list, "decoder")
        if len(bits) != 8 * tokens or not all(isinstance(b, int) and not isinstance(b, bool) and b >= -1 for b in bits):
            raise FormatError(f"{self.path}: decoder.{key}: want {8 * tokens} ints ≥ −1 (8 a token), got {len(bits)} entries")
        return torch.tensor(bits, dtype=torch.long)

    def state_dict(self):
        """The StockDecoder's state dict (float32, dense)."""
        dc, need = self.cfg["decoder"], self.need
        sd = {"tok_embed.weight": _dense(need(dc["tok_embed"])), "pos_embed.weight": _dense(need(dc["pos_embed"])),
              "lm_head.weight": _dense(need(dc["head"]["weight"])), "lm_head.bias": _dense(need(dc["head"]["bias"])).reshape(-1)}
        if dc.get("norm") is not None:
            sd["norm_f.weight"] = _dense(need(dc["norm"]["weight"])).reshape(-1)
            sd["norm_f.bias"] = _dense(need(dc["norm"]["bias"])).reshape(-1)
        for i, blk in enumerate(self.cfg["blocks"]):
            sd.update(_layer_state(need, blk["layer"], f"layers.{i}."))
        return {k: v.to(torch.float32).contiguous() for k, v in sd.items()}

    def module(self, dtype=torch.float32):
        """The StockDecoder (eval mode) with the model's weights, loaded
        with strict=True, in dtype (float32, float64 or bfloat16)."""
        if dtype not in self._modules:
            m = StockDecoder(self.vocab, self.positions, self.d, self.layers, self.norm_eps)
            m.load_state_dict(self.state_dict(), strict=True)
            self._modules[dtype] = m.eval().to(dtype)
        return self._modules[dtype]

    # Tokens and bits.

    def prompt_tokens(self, bits):
        """Prompt tokens (int64 [n, prompt]) of circuit input bits (0/1
        [n, inputs]): bit k of token j is input prompt_bits[8j+k]."""
        bits = torch.as_tensor(bits).reshape(-1, self.inputs).to(torch.long)
        padded = torch.cat([bits, torch.zeros(bits.shape[0], 1, dtype=torch.long)], dim=1)
        idx = torch.where(self.prompt_bits >= 0, self.prompt_bits, torch.full_like(self.prompt_bits, self.inputs))
        b = padded[:, idx].reshape(-1, self.prompt, 8)
        return (b << torch.arange(8)).sum(dim=-1)

    def output_bits(self, generated):
        """Circuit output bits (uint8 [n, outputs]) of generated tokens
        [n, generated]: its last digest tokens through digest_bits."""
        tok = torch.as_tensor(generated).reshape(-1, self.generated)[:, self.working:]
        bits = ((tok.unsqueeze(-1) >> torch.arange(8)) & 1).reshape(tok.shape[0], -1)
        out = torch.zeros(tok.shape[0], self.outputs, dtype=torch.uint8)
        for i, o in enumerate(self.digest_bits.tolist()):
            if o >= 0:
                out[:, o] = bits[:, i].to(torch.uint8)
        return out

    # Passes.

    def teacher_forced(self, seqs, dtype=torch.float32, batch=4, stop=False):
        """One pass over whole sequences seqs (int64 [n, positions]: prompt
        then the expected generated tokens) with the causal mask: returns
        the argmax at positions prompt − 1 … positions − 2 (the tokens the
        model writes given the expected ones, [n, generated]) and each
        token's margin (winner's logit minus the runner-up's, or the
        expected token's minus the best other where they differ, over the
        head's scale: [n, generated]). The pass is the stock layers'
        forward with the causal mask, or — where its score matrices (batch
        × heads × positions², float32) would pass SCORES_BYTES —
        StockDecoder.forced, the same equations position by position with
        the KV cache. float16 runs emulated (_emulated):
        PyTorch 1.13 has no CPU float16 kernels for these layers. stop:
        end after the first batch with a wrong token (the rows so far)."""
        seqs = torch.as_tensor(seqs)
        if seqs.dim() != 2 or seqs.shape[1] != self.positions:
            raise ValueError(f"{self.path}: want sequences of shape [n, {self.positions}] (prompt and generated tokens), got {list(seqs.shape)}")
        if seqs.dtype.is_floating_point or seqs.dtype.is_complex or seqs.dtype == torch.bool:
            raise ValueError(f"{self.path}: want integer tokens, got dtype {seqs.dtype}")
        seqs = seqs.to(torch.long)
        if len(seqs) and (int(seqs.min()) < 0 or int(seqs.max()) >= self.vocab):
            raise ValueError(f"{self.path}: a token outside the vocabulary 0 … {self.vocab - 1}")
        preds, margins = [], []
        with torch.no_grad():
            for lo in range(0, seqs.shape[0], batch):
                s = seqs[lo:lo + batch]
                if dtype == torch.float16:
                    logits = self._emulated(s, torch.float16)
                elif self._scores_bytes(s.shape[0]) > SCORES_BYTES:
                    logits = self.module(dtype).forced(s)
                else:
                    logits = self.module(dtype)(s)
                logits = logits[:, self.prompt - 1:-1].to(torch.float32)
                preds.append(logits.argmax(dim=-1))
                margins.append(_margin(logits, s[:, self.prompt:]) / self.head_scale)
                if stop and bool((preds[-1] != s[:, self.prompt:]).any()):
                    break
        return torch.cat(preds), torch.cat(margins)

    def _scores_bytes(self, batch):
        return 4 * batch * max(h for h, _, _ in self.layers) * self.positions ** 2

    def layer_outputs(self, seq, dtype=torch.float32, upto=None):
        """The residual stream [layers + 1, upto, d] (float32) after the
        embeddings and after each layer, of one sequence in dtype, at its
        first upto positions (default all: causal, so they are the whole
        pass's). Where the stock layers' score matrices (heads × upto²
        float32) would pass SCORES_BYTES, the layers' equations run
        emulated (_emulated: each step rounded to dtype, computed in
        float32, 512 query rows at a time); float16 always does."""
        seq = torch.as_tensor(seq).to(torch.long).reshape(1, self.positions)[:, :upto or self.positions]
        T = seq.shape[1]
        outs = []
        with torch.no_grad():
            if dtype == torch.float16 or 4 * max(h for h, _, _ in self.layers) * T * T > SCORES_BYTES:
                self._emulated(seq, dtype, outs)
            else:
                m = self.module(dtype)
                x = m.tok_embed(seq) + m.pos_embed.weight[:T]
                outs.append(x)
                mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
                for layer in m.layers:
                    x = layer(x, src_mask=mask)
                    outs.append(x)
        return torch.stack([o[0].to(torch.float32) for o in outs])

    def _emulated(self, seqs, dtype, trace=None):
        """Logits of a pass in dtype emulated: weights and every step's
        result rounded to dtype, each step in float32 (as
        tcforge_torch.Model's float16 pass of stock layers)."""
        r = lambda t: _round(t, dtype)
        key = ("emulated", dtype)
        if key not in self._modules:
            self._modules[key] = {k: r(v) for k, v in self.state_dict().items()}
        sd = self._modules[key]
        T = seqs.shape[1]
        x = r(sd["tok_embed.weight"][seqs] + sd["pos_embed.weight"][:T])
        if trace is not None:
            trace.append(x)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        for i, (H, _, eps) in enumerate(self.layers):
            x = _emulated_layer(x, lambda s: sd[f"layers.{i}.{s}"], H, eps, r, mask)
            if trace is not None:
                trace.append(x)
        if self.norm_eps is not None:
            x = r(torch.nn.functional.layer_norm(x, (self.d,), sd["norm_f.weight"], sd["norm_f.bias"], self.norm_eps))
        return r(r(x @ sd["lm_head.weight"].T) + sd["lm_head.bias"])

    def diagnose(self, seq, dtype, position, tol=0.25):
        """Where a pass in dtype leaves the float32 one at a failing
        position (index among the positions): each layer's largest
        deviation of the residual stream there, and the first layer whose
        deviation exceeds tol (None if none does)."""
        ref = self.layer_outputs(seq, torch.float32, position + 1)[:, position]
        got = self.layer_outputs(seq, dtype, position + 1)[:, position]
        dev = (got - ref).abs().max(dim=-1).values.tolist()
        first = next((i for i, v in enumerate(dev) if v > tol), None)
        return dev, first


def _margin(logits, want):
    """(logit of want − the best other) where argmax = want, else (want's
    − the argmax's): negative exactly where the argmax is wrong."""
    top2 = logits.topk(2, dim=-1)
    w = logits.gather(-1, want.unsqueeze(-1)).squeeze(-1)
    best_other = torch.where(top2.indices[..., 0] == want, top2.values[..., 1], top2.values[..., 0])
    return w - best_other


class DecoderDigestModule(nn.Module):
    """Bytes in, digest out through greedy decoding: msg (uint8 [B, L]
    with lengths [B], or uint8 [L]) is padded as the construction
    requires (digest.pad_message), its input bits packed into prompt
    tokens (prompt_bits), the decoder writes the working and the digest
    tokens, whose bits (digest_bits) are packed into digest bytes in the
    construction's bit order. working(msg, lengths) returns every
    generated token instead."""

    def __init__(self, n_bytes: int, min_len: int, max_len: int, suffix: int, msg_start: int, length_bytes: int,
                 prompt: int, generated: int, digest: int, out_bits: int):
        super().__init__()
        self.n_bytes, self.min_len, self.max_len = n_bytes, min_len, max_len
        self.suffix, self.msg_start, self.length_bytes = suffix, msg_start, length_bytes
        self.prompt, self.generated, self.digest, self.out_bits = prompt, generated, digest, out_bits
        self.register_buffer("const_bytes", torch.zeros(n_bytes, dtype=torch.long))
        self.register_buffer("length_div", torch.ones(n_bytes, dtype=torch.long))
        self.register_buffer("length_mask", torch.zeros(n_bytes, dtype=torch.long))
        # byte_bits[v, i]: input bit 8j + i of a byte v at byte j (the bit
        # order); prompt_index[8j + k]: the input bit that is bit k of
        # prompt token j (8 · n_bytes: always 0); out_perm[o]: the digest
        # tokens' bit (8j + k) that is output bit o; bit_weights: a digest
        # byte's bits in the bit order.
        self.register_buffer("byte_bits", torch.zeros(256, 8, dtype=torch.long))
        self.register_buffer("prompt_index", torch.zeros(8 * prompt, dtype=torch.long))
        self.register_buffer("out_perm", torch.zeros(out_bits, dtype=torch.long))
        self.register_buffer("bit_weights", torch.zeros(8, dtype=torch.long))
        self.decoder = nn.Identity()  # set by decoder_module

    def forward(self, msg: torch.Tensor, lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
        msg, lengths, single = check_message(msg, lengths, self.min_len, self.max_len)
        out = self.digest_of(self.decode(msg, lengths))
        if single:
            return out[0]
        return out

    @torch.jit.export
    def digest_of(self, tok: torch.Tensor) -> torch.Tensor:
        """The digest bytes (uint8 [B, digest bytes]) of generated tokens
        [B, generated]: the digest tokens' bits in the bit order."""
        tok = tok[:, self.generated - self.digest:]
        bits = ((tok.unsqueeze(-1) >> torch.arange(8)) & 1).reshape(tok.shape[0], 8 * self.digest)
        bits = bits.index_select(1, self.out_perm).reshape(tok.shape[0], self.out_bits // 8, 8)
        return (bits * self.bit_weights).sum(dim=-1).to(torch.uint8)

    @torch.jit.export
    def working(self, msg: torch.Tensor, lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Every generated token (int64 [B, generated], or [generated]):
        the working, then the digest tokens."""
        msg, lengths, single = check_message(msg, lengths, self.min_len, self.max_len)
        tok = self.decode(msg, lengths)
        if single:
            return tok[0]
        return tok

    @torch.jit.export
    def prompt_of(self, msg: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The prompt tokens (int64 [B, prompt]) of checked messages."""
        return self.prompt_bytes(pad_message(msg, lengths, self.n_bytes, self.msg_start, self.suffix, self.length_bytes,
                                             self.const_bytes, self.length_div, self.length_mask))

    @torch.jit.export
    def prompt_bytes(self, b: torch.Tensor) -> torch.Tensor:
        """The prompt tokens (int64 [B, prompt]) of padded input bytes b
        (int64 [B, n])."""
        bits = self.byte_bits[b].reshape(b.shape[0], 8 * self.n_bytes)  # [B, 8 n]: input bit i
        bits = torch.cat([bits, torch.zeros(b.shape[0], 1, dtype=torch.long)], dim=1)
        return (bits[:, self.prompt_index].reshape(b.shape[0], self.prompt, 8) << torch.arange(8)).sum(dim=-1)

    def decode(self, msg: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if msg.shape[0] == 0:
            return torch.zeros(0, self.generated, dtype=torch.long)
        return self.decoder.generate(self.prompt_of(msg, lengths), self.generated)


def decoder_module(model):
    """The DecoderDigestModule of a loaded DecoderModel whose construction
    has a byte interface (digest._byte_interface: whole bytes in a bit
    order, padded as the construction requires)."""
    bi = _byte_interface(model)
    if 8 * bi.n != model.inputs:
        raise FormatError(f"{model.path}: the decoder's prompt reads {model.inputs} input bits, the byte interface {8 * bi.n}")
    mod = DecoderDigestModule(bi.n, bi.min_len, bi.max_len, bi.suffix, bi.msg_start, bi.length_bytes,
                              model.prompt, model.generated, model.digest, bi.digest_bits)
    msb = bi.msb_first
    with torch.no_grad():
        _interface_buffers(mod, bi)
        for v in range(256):
            for i in range(8):
                mod.byte_bits[v, i] = (v >> (7 - i if msb else i)) & 1
        mod.prompt_index.copy_(torch.where(model.prompt_bits >= 0, model.prompt_bits, torch.full_like(model.prompt_bits, 8 * bi.n)))
        perm = torch.full((bi.digest_bits,), -1, dtype=torch.long)
        for i, o in enumerate(model.digest_bits.tolist()):
            if 0 <= o < bi.digest_bits:
                perm[o] = i
        if bool((perm < 0).any()):
            raise FormatError(f"{model.path}: digest bit {int((perm < 0).nonzero()[0])} is in no digest token")
        mod.out_perm.copy_(perm)
        mod.bit_weights.copy_(torch.tensor([1 << (7 - i if msb else i) for i in range(8)]))
    mod.decoder = model.module(torch.float32)
    return mod.eval()


def check_module(mod, model):
    """Checks a DecoderDigestModule against what the config says before
    it is written (as digest.check_module does a stock model's): every
    test vector's prompt from its input bytes through the module's own
    byte path, and its digest from its tokens through the module's digest
    packing (the loader ran the first vector's tokens: check_vectors);
    and, for a standard instance at full size (SHA3-*, SHA-2), one message
    of the longest length greedily decoded against hashlib, which catches
    a padding or preset that does not describe the model. Raises
    FormatError naming the first mismatch; returns what was checked, for
    the module's provenance."""
    bi = _byte_interface(model)
    done = {}
    ins, outs, seqs = model.test_vectors()
    if len(ins):
        with torch.no_grad():
            prompts = mod.prompt_bytes(_pack(ins, bi.msb_first))
            digests = mod.digest_of(seqs[:, model.prompt:])
        want = _pack(outs[:, :bi.digest_bits], bi.msb_first).to(torch.uint8)
        for i in range(len(ins)):
            if not torch.equal(prompts[i], seqs[i, :model.prompt]):
                raise FormatError(f"{model.path}: the byte module's prompt of test vector {i + 1} of {len(ins)} differs from the config's; not written")
            if not torch.equal(digests[i], want[i]):
                raise FormatError(f"{model.path}: the byte module's digest of test vector {i + 1}'s tokens is {bytes(digests[i].tolist()).hex()}, "
                                  f"the config says {bytes(want[i].tolist()).hex()}; not written")
        done["test_vectors"] = len(ins)
    # One message of the longest length: greedy decoding of a full-size
    # decoder takes seconds a message.
    ref = check_reference(mod, model, bi, [bi.max_len], 35)
    if ref is not None:
        done["reference"] = ref
    return done


def save_torchscript(mod, path, provenance=None):
    """Writes a DecoderDigestModule as TorchScript (scripted whole: the
    greedy loop branches on the input), provenance in its extra file
    digest.PROVENANCE; torch.jit.load(path) needs no tcforge."""
    extra = {PROVENANCE: json.dumps(provenance or {}, sort_keys=True)}
    with warnings.catch_warnings():  # nn.MultiheadAttention's batch_first constant, not set in its __init__
        warnings.filterwarnings("ignore", message="'batch_first' was found in ScriptModule constants")
        scripted = torch.jit.script(mod)
    atomic_write(path, lambda f: torch.jit.save(scripted, f, _extra_files=extra))


def save_onnx(mod, path, provenance=None):
    """Writes a DecoderDigestModule as ONNX (onnxgraph.write_decoder_onnx:
    the greedy loop as one Loop), provenance in its metadata_props."""
    from .onnxgraph import write_decoder_onnx

    meta = {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in (provenance or {}).items()}
    atomic_write(path, lambda f: write_decoder_onnx(mod, f, meta))
