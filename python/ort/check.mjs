// node check.mjs MODEL.onnx MESSAGES: runs a tcforge byte module exported
// as ONNX (inputs msg uint8 [batch, n], lengths int64 [batch]; outputs
// digest uint8 [batch, m] and valid bool [batch], and for a decoder tokens
// int64 [batch, g]) in ONNX Runtime on the messages of a file, one hex
// message a line, each zero-filled to the model's n bytes, and prints one
// JSON object: the runtime's version, the digests (hex), which lengths
// the model took as valid, a decoder's generated tokens (one list a
// message), the session's load time and the time per message of one
// batched run after a warm-up run (a decoder's warm-up: the first message
// alone, its greedy loop being as long for one message as for many). It
// fails (exit 1) if the model has no valid output, or gives a row it
// calls invalid a digest (or tokens) that are not all zeros
// (docs/export.md: ONNX has no exceptions).
import { readFileSync } from "node:fs";
import ort from "onnxruntime-node";

const [model, messages] = process.argv.slice(2);
if (!model || !messages) {
  console.error("usage: node check.mjs MODEL.onnx MESSAGES");
  process.exit(2);
}
const tLoad = process.hrtime.bigint();
const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: "basic" });
const loadSecs = Number(process.hrtime.bigint() - tLoad) / 1e9;
const lines = readFileSync(messages, "utf8").replace(/\n$/, "").split("\n");
// n: the model's input width, from the first line's "#n" header.
const n = Number(lines[0].slice(1));
const hexes = lines.slice(1); // "#n" alone: an empty batch
const B = hexes.length;
const msg = new Uint8Array(B * n);
const lengths = new BigInt64Array(B);
hexes.forEach((h, i) => {
  const bytes = Buffer.from(h, "hex");
  if (bytes.length > n) {
    console.error(`message ${i}: ${bytes.length} bytes, the model reads ${n}`);
    process.exit(1);
  }
  msg.set(bytes, i * n);
  lengths[i] = BigInt(bytes.length);
});
const feeds = {
  msg: new ort.Tensor("uint8", msg, [B, n]),
  lengths: new ort.Tensor("int64", lengths, [B]),
};
const decoder = session.outputNames.includes("tokens");
if (decoder && B > 0) {
  await session.run({ msg: new ort.Tensor("uint8", msg.subarray(0, n), [1, n]), lengths: new ort.Tensor("int64", lengths.subarray(0, 1), [1]) });
} else {
  await session.run(feeds); // warm-up
}
const t0 = process.hrtime.bigint();
const out = await session.run(feeds);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
const d = out.digest;
const m = d.dims[1];
if (!out.valid || out.valid.type !== "bool" || out.valid.dims.length !== 1 || out.valid.dims[0] !== B) {
  console.error(`${model}: no valid output of bool [${B}] beside the digest`);
  process.exit(1);
}
const digests = [];
const valid = [];
for (let i = 0; i < B; i++) {
  const row = d.data.subarray(i * m, (i + 1) * m);
  digests.push(Buffer.from(row).toString("hex"));
  valid.push(Boolean(out.valid.data[i]));
  if (!valid[i] && row.some((x) => x !== 0)) {
    console.error(`message ${i}: length ${lengths[i]} is invalid for the model, but its digest is not all zeros`);
    process.exit(1);
  }
}
const result = { version: ort.env.versions?.common ?? ort.env.versions?.node ?? "unknown", digests, valid, seconds_per_message: B ? secs / B : 0, load_seconds: loadSecs };
if (decoder) {
  const t = out.tokens;
  const g = t.dims[1];
  result.tokens = [];
  for (let i = 0; i < B; i++) {
    const row = t.data.subarray(i * g, (i + 1) * g);
    if (!valid[i] && row.some((x) => x !== 0n)) {
      console.error(`message ${i}: length ${lengths[i]} is invalid for the model, but its tokens are not all zeros`);
      process.exit(1);
    }
    result.tokens.push(Array.from(row, Number));
  }
}
console.log(JSON.stringify(result));
