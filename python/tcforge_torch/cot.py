"""Chain-of-thought training for `python3 -m tcforge_torch train SEQS.cot.json`
(docs/learnability.md, issue 36): a causal, GPT-shaped model over a byte
vocabulary learns, by teacher-forced next-token prediction, to write a
circuit's working and then its digest after a message's bytes, and is
evaluated by greedy generation on held-out messages.

The data is a sequence file (format "tcforge-cot-sequences", version 1),
JSON:

    prompt, working, digest   token counts: the message, the working, the digest
    vocab                     the vocabulary (256 byte values, then specials)
    step                      the step of every working token (working entries,
                              non-decreasing from 0): the circuit levels it ends
    shape                     the teacher's shape, if it is a model: layers,
                              d_model, heads, ffn (one width, or one a layer)
    sequences                 one hex string a message: prompt + working +
                              digest tokens, one byte each (vocab 256), or a
                              list of token numbers; distinct messages
    source, instance, names   what wrote the file, the instance, token names

`--working K` thins the working: every step (1), every other step (2: the
tokens of steps 1, 3, 5, …), every K-th, or none (0: the digest right after
the message). The model (stock PyTorch only): nn.Embedding tokens and
positions, L nn.TransformerEncoderLayers (norm first, ReLU, no dropout)
run with a causal mask, a final nn.LayerNorm and a linear LM head; the
shape is the file's unless --layers, --d-model, --heads or --ffn say
otherwise. The loss is the cross-entropy of every kept working and digest
token given the tokens before it (the true ones: teacher forcing). A log
row generates greedily from the held-out prompts (each argmax fed back):
exact = every digest token right, working_exact = every kept working token
right, bit_acc = the digest's bits.
"""

import json
import math
import sys

import torch

from . import FormatError, read_regular

FORMAT = "tcforge-cot-sequences"
VERSIONS = (1,)

__all__ = ["FORMAT", "Sequences", "read_sequences", "GPT", "CoTJob", "check_args"]


class Sequences:
    """A checked sequence file: tokens [n, prompt + working + digest]."""

    def __init__(self, path, doc, tokens):
        self.path = path
        self.prompt, self.working, self.digest = int(doc["prompt"]), int(doc["working"]), int(doc["digest"])
        self.vocab = int(doc["vocab"])
        self.step = [int(s) for s in doc.get("step", [])]
        self.shape = doc.get("shape") or {}
        self.source = doc.get("source", "")
        self.instance = doc.get("instance", "")
        self.tokens = tokens

    def kept(self, every):
        """The positions of the sequence a thinned working keeps: the
        prompt, the working tokens of every every-th step (none for 0), the
        digest."""
        pos = list(range(self.prompt))
        if every > 0:
            pos += [self.prompt + i for i, s in enumerate(self.step) if s % every == every - 1]
        return pos + list(range(self.prompt + self.working, self.prompt + self.working + self.digest))


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def check_doc(path, doc):
    """Checks a sequence file's header (not its sequences); raises
    FormatError naming the file and the entry."""
    if not isinstance(doc, dict):
        raise FormatError(f"{path}: not a JSON object")
    if doc.get("format") != FORMAT:
        raise FormatError(f"{path}: format {doc.get('format')!r}, want {FORMAT!r}")
    if doc.get("version") not in VERSIONS:
        raise FormatError(f"{path}: unknown version {doc.get('version')!r} (this reader reads {', '.join(map(str, VERSIONS))})")
    for key, lo in (("prompt", 1), ("working", 0), ("digest", 1), ("vocab", 2)):
        if not _int(doc.get(key)) or doc[key] < lo:
            raise FormatError(f"{path}: {key} is {doc.get(key)!r}, want an integer ≥ {lo}")
    step = doc.get("step", [])
    if not isinstance(step, list) or len(step) != doc["working"]:
        raise FormatError(f"{path}: step has {len(step) if isinstance(step, list) else type(step).__name__} entries for {doc['working']} working tokens")
    for i, s in enumerate(step):
        if not _int(s) or s < 0 or (i and s < step[i - 1]):
            raise FormatError(f"{path}: step[{i}] is {s!r}: want non-decreasing integers from 0")
    shape = doc.get("shape") or {}
    if not isinstance(shape, dict):
        raise FormatError(f"{path}: shape is {type(shape).__name__}, want an object")
    for key in ("layers", "d_model", "heads"):
        if key in shape and (not _int(shape[key]) or shape[key] < 1):
            raise FormatError(f"{path}: shape.{key} is {shape[key]!r}, want a positive integer")
    if "ffn" in shape:
        f = shape["ffn"]
        fs = f if isinstance(f, list) else [f]
        if not fs or any(not _int(x) or x < 1 for x in fs) or (isinstance(f, list) and "layers" in shape and len(f) != shape["layers"]):
            raise FormatError(f"{path}: shape.ffn is {f!r}, want a positive width or one a layer")
    if not isinstance(doc.get("sequences"), list):
        raise FormatError(f"{path}: sequences is {type(doc.get('sequences')).__name__}, want a list")


def read_sequences(path, limit=1 << 32, doc=None):
    """Reads and checks a sequence file (doc: its parsed JSON, if read
    already): every sequence prompt + working + digest tokens long, every
    token in the vocabulary, no message twice."""
    if doc is None:
        try:
            doc = json.loads(read_regular(path, "sequence file", limit))
        except ValueError as e:
            if isinstance(e, FormatError):
                raise
            raise FormatError(f"{path}: not JSON: {e}") from None
    check_doc(path, doc)
    n = doc["prompt"] + doc["working"] + doc["digest"]
    rows = []
    for i, s in enumerate(doc["sequences"]):
        if isinstance(s, str):
            try:
                r = list(bytes.fromhex(s))
            except ValueError:
                raise FormatError(f"{path}: sequence {i}: not hex") from None
        elif isinstance(s, list) and all(_int(t) for t in s):
            r = s
        else:
            raise FormatError(f"{path}: sequence {i}: want a hex string or a list of token numbers")
        if len(r) != n:
            raise FormatError(f"{path}: sequence {i} has {len(r)} tokens, want prompt {doc['prompt']} + working {doc['working']} + "
                              f"digest {doc['digest']} = {n}: a working of another model")
        if r and (min(r) < 0 or max(r) >= doc["vocab"]):
            raise FormatError(f"{path}: sequence {i}: token {max(r) if max(r) >= doc['vocab'] else min(r)} outside the vocabulary of {doc['vocab']}")
        rows.append(r)
    tokens = torch.tensor(rows, dtype=torch.long).reshape(len(rows), n)
    prompts = {bytes(r[:doc["prompt"]]) for r in tokens.tolist()}
    if len(prompts) != len(rows):
        raise FormatError(f"{path}: {len(rows) - len(prompts)} messages repeat: the held-out messages must be unseen")
    return Sequences(path, doc, tokens)


class GPT(torch.nn.Module):
    """Token and position embeddings, stock encoder layers run with a
    causal mask (GPT's block), a final LayerNorm, a linear LM head."""

    def __init__(self, vocab, positions, d, heads, ffn, eps=1e-5):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(positions, d)
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d, heads, f, dropout=0.0, activation="relu", batch_first=True, norm_first=True, layer_norm_eps=eps)
            for f in ffn)
        self.norm = torch.nn.LayerNorm(d, eps=eps)
        self.head = torch.nn.Linear(d, vocab)
        self.register_buffer("mask", torch.triu(torch.full((positions, positions), float("-inf")), diagonal=1), persistent=False)

    def forward(self, tokens):
        """Logits [n, t, vocab] of the next token at every position."""
        t = tokens.shape[1]
        x = self.tok(tokens) + self.pos.weight[:t]
        m = self.mask[:t, :t]
        for layer in self.layers:
            x = layer(x, src_mask=m)
        return self.head(self.norm(x))

    def generate_slow(self, prompt, count):
        """Greedy decoding by a full forward pass a token (the reference
        generate is checked against)."""
        seq = prompt
        with torch.no_grad():
            for _ in range(count):
                nxt = self.forward(seq)[:, -1].argmax(-1, keepdim=True)
                seq = torch.cat([seq, nxt], dim=1)
        return seq[:, prompt.shape[1]:]

    def _layer_step(self, layer, x, cache, causal):
        """One norm-first layer on the new positions x [n, t, d], the keys
        and values of the positions before them in cache (a [k, v] pair,
        extended here): nn.TransformerEncoderLayer's computation with a
        key/value cache."""
        a = layer.self_attn
        n, t, d = x.shape
        H = a.num_heads
        hd = d // H
        q, k, v = torch.nn.functional.linear(layer.norm1(x), a.in_proj_weight, a.in_proj_bias).chunk(3, dim=-1)
        split = lambda z: z.reshape(n, z.shape[1], H, hd).transpose(1, 2)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        if cache[0] is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        cache[0], cache[1] = k, v
        w = (q / math.sqrt(hd)) @ k.transpose(-2, -1)
        if causal:
            w = w + self.mask[:t, :t]
        y = (torch.softmax(w, dim=-1) @ v).transpose(1, 2).reshape(n, t, d)
        x = x + a.out_proj(y)
        return x + layer.linear2(layer.activation(layer.linear1(layer.norm2(x))))

    def generate(self, prompt, count):
        """Greedy decoding: count tokens after prompt [n, p], each the argmax
        given the ones before, fed back (a key/value cache: one position a
        layer a step). Returns [n, count]."""
        out = []
        with torch.no_grad():
            p = prompt.shape[1]
            caches = [[None, None] for _ in self.layers]
            x = self.tok(prompt) + self.pos.weight[:p]
            for layer, c in zip(self.layers, caches):
                x = self._layer_step(layer, x, c, True)
            for i in range(count):
                nxt = self.head(self.norm(x[:, -1:])).argmax(-1)
                out.append(nxt)
                if i + 1 == count:
                    break
                x = self.tok(nxt) + self.pos.weight[p + i:p + i + 1]
                for layer, c in zip(self.layers, caches):
                    x = self._layer_step(layer, x, c, False)
        return torch.cat(out, dim=1) if out else prompt[:, :0]


def check_args(p, args):
    """Usage errors of a chain-of-thought run (p: the parser)."""
    if args.init != "scratch":
        p.error(f"a chain-of-thought run trains from scratch (--init scratch), not --init {args.init}")
    if args.density != "none":
        p.error("--trace supervises an export's residual; a chain-of-thought run's working is in its sequences (--working)")
    if args.width != 1:
        p.error("--width scales an export's shape; give a chain-of-thought run's shape with --d-model and --ffn")


def _shape(seqs, args):
    sh = dict(seqs.shape)
    for key in ("layers", "d_model", "heads", "ffn"):
        v = getattr(args, key)
        if v:
            sh[key] = v
    missing = [k for k in ("layers", "d_model", "heads", "ffn") if k not in sh]
    if missing:
        raise FormatError(f"{seqs.path}: the file gives no {', '.join(missing)} of a shape: give --{' --'.join(m.replace('_', '-') for m in missing)}")
    ffn = sh["ffn"] if isinstance(sh["ffn"], list) and not args.ffn else [int(sh["ffn"] if not isinstance(sh["ffn"], list) else args.ffn)] * sh["layers"]
    if len(ffn) != sh["layers"]:
        raise FormatError(f"{seqs.path}: shape.ffn has {len(ffn)} widths for {sh['layers']} layers (give --ffn for one width)")
    if sh["d_model"] % sh["heads"]:
        raise FormatError(f"{seqs.path}: heads {sh['heads']} do not divide d_model {sh['d_model']}")
    return {"layers": sh["layers"], "d_model": sh["d_model"], "heads": sh["heads"], "ffn": ffn}


class CoTJob:
    """A chain-of-thought run's data, model, loss and log figures (the
    interface of train.BitsJob)."""

    def __init__(self, args, cfg, device):
        self.args, self.device = args, device
        seqs = read_sequences(args.config, doc=cfg)
        self.seqs = seqs
        need = args.train + args.heldout
        if seqs.tokens.shape[0] < need:
            raise FormatError(f"{args.config}: {seqs.tokens.shape[0]} sequences, fewer than --train {args.train} + --heldout {args.heldout}")
        every = int(args.working)
        pos = seqs.kept(every)
        self.keep = torch.tensor(pos, dtype=torch.long)
        toks = seqs.tokens[:need, self.keep]
        self.P = seqs.prompt
        self.W = len(pos) - seqs.prompt - seqs.digest  # working tokens kept
        self.D = seqs.digest
        self.tr, self.te = toks[:args.train], toks[args.train:need]
        sh = _shape(seqs, args)
        torch.manual_seed(args.seed)
        self.net = GPT(seqs.vocab, len(pos), sh["d_model"], sh["heads"], sh["ffn"])
        self.net.to(device)
        self.shape = {"tokens": len(pos), "d_model": sh["d_model"], "blocks": sh["layers"], "heads": sh["heads"],
                      "ffn": max(sh["ffn"]), "params": sum(p.numel() for p in self.net.parameters())}
        self.ntrain = self.tr.shape[0]
        dig = self.tr[:, -self.D:]
        bits = ((dig.unsqueeze(-1) >> torch.arange(8)) & 1).reshape(dig.shape[0], -1)
        self.varying = bits.min(0).values != bits.max(0).values
        print(f"chain of thought: {args.config} ({seqs.source or 'source not named'}): {seqs.prompt} prompt, "
              f"{self.W} of {seqs.working} working tokens (--working {every}), {seqs.digest} digest tokens; "
              f"{sh['layers']} layers, d_model {sh['d_model']}, {sh['heads']} heads, FFN {sh['ffn'] if len(set(sh['ffn'])) > 1 else sh['ffn'][0]}",
              file=sys.stderr)

    def meta(self, cfg):
        s = self.seqs
        return {"kind": "cot", "shape": self.shape, "source": s.source, "sequence_instance": s.instance,
                "prompt": s.prompt, "working": s.working, "working_kept": self.W, "working_every": int(self.args.working),
                "digest": s.digest, "inputs": 8 * s.prompt, "outputs": 8 * s.digest, "varying_outputs": int(self.varying.sum()),
                "teacher": "the sequence file's working and digest (" + (s.source or "source not named") + ")"}

    def batch_loss(self, idx):
        x = self.tr[idx].to(self.device)
        logits = self.net(x[:, :-1])[:, self.P - 1:]  # predicts tokens P … end
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, self.P:].reshape(-1))

    def _greedy(self, toks, chunk=512):
        """(teacher-forced loss, digest bits right [n, 8·D], digest exact
        [n], working exact [n]) of greedy generation on toks."""
        loss, bits, dex, wex = 0.0, [], [], []
        with torch.no_grad():
            for i in range(0, toks.shape[0], chunk):
                x = toks[i:i + chunk].to(self.device)
                lg = self.net(x[:, :-1])[:, self.P - 1:]
                loss += float(torch.nn.functional.cross_entropy(lg.reshape(-1, lg.shape[-1]), x[:, self.P:].reshape(-1), reduction="sum"))
                want = x[:, self.P:]
                gen = self._generate(x, lg.argmax(-1))
                gd, wd = gen[:, self.W:], want[:, self.W:]
                bits.append((((gd.unsqueeze(-1) >> torch.arange(8, device=gd.device)) & 1) ==
                             ((wd.unsqueeze(-1) >> torch.arange(8, device=gd.device)) & 1)).reshape(gd.shape[0], -1).cpu())
                dex.append((gd == wd).all(1).cpu())
                wex.append((gen[:, :self.W] == want[:, :self.W]).all(1).cpu())
        n = toks.shape[0] * (toks.shape[1] - self.P)
        return loss / n, torch.cat(bits).to(torch.float32), torch.cat(dex), torch.cat(wex)

    def _generate(self, x, forced):
        """Greedy generation after the prompts of x, given the argmax of
        the teacher-forced pass (forced, [n, generated]): where that is
        right at every position, greedy decoding writes exactly the true
        tokens (each step sees the true prefix), so only the other samples
        are decoded, from the earliest position any of them gets wrong (the
        tokens before it are the true ones for all of them)."""
        want = x[:, self.P:]
        bad = (forced != want).any(1)
        gen = want.clone()
        if bool(bad.any()):
            ok = (forced[bad] == want[bad]).to(torch.int64)
            s0 = int(ok.argmin(1).min())  # the first wrong position of any bad sample
            xb = x[bad, :self.P + s0]
            gen[bad] = torch.cat([want[bad, :s0], self.net.generate(xb, want.shape[1] - s0)], dim=1)
        return gen

    def row(self, loss):
        loss, bits, dex, wex = self._greedy(self.te)
        acc = bits.mean(0)
        _, _, tdex, _ = self._greedy(self.tr[:min(256, self.ntrain)])
        return {"loss": loss, "bit_acc": float(acc.mean()), "var_bit_acc": float(acc[self.varying].mean()) if bool(self.varying.any()) else 1.0,
                "exact": float(dex.to(torch.float32).mean()), "train_exact": float(tdex.to(torch.float32).mean()),
                "trace_mse": float("nan"), "working_exact": float(wex.to(torch.float32).mean()) if self.W else float("nan")}

    def constant_loss(self):
        return math.nan
