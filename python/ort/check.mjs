// node check.mjs MODEL.onnx MESSAGES: runs a tcforge byte module exported
// as ONNX (inputs msg uint8 [batch, n], lengths int64 [batch]; output
// digest uint8 [batch, m], and for a decoder tokens int64 [batch, g]) in
// ONNX Runtime on the messages of a file, one hex message a line, each
// zero-filled to the model's n bytes, and prints one JSON object: the
// runtime's version, the digests (hex), a decoder's generated tokens (one
// list a message), the session's load time and the time per message of
// one batched run after a warm-up run (a decoder's warm-up: the first
// message alone, its greedy loop being as long for one message as for
// many).
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
const hexes = lines.slice(1);
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
if (decoder) {
  await session.run({ msg: new ort.Tensor("uint8", msg.subarray(0, n), [1, n]), lengths: new ort.Tensor("int64", lengths.subarray(0, 1), [1]) });
} else {
  await session.run(feeds); // warm-up
}
const t0 = process.hrtime.bigint();
const out = await session.run(feeds);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
const d = out.digest;
const m = d.dims[1];
const digests = [];
for (let i = 0; i < B; i++) {
  digests.push(Buffer.from(d.data.subarray(i * m, (i + 1) * m)).toString("hex"));
}
const result = { version: ort.env.versions?.common ?? ort.env.versions?.node ?? "unknown", digests, seconds_per_message: secs / B, load_seconds: loadSecs };
if (decoder) {
  const t = out.tokens;
  const g = t.dims[1];
  result.tokens = [];
  for (let i = 0; i < B; i++) {
    result.tokens.push(Array.from(t.data.subarray(i * g, (i + 1) * g), Number));
  }
}
console.log(JSON.stringify(result));
