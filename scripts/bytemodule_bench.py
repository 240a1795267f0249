"""Times a byte module (tcforge run --export's BASE.pt and BASE.onnx) in
PyTorch and ONNX Runtime on the same random messages, and checks the
digests: against hashlib where the model is SHA3-256 or SHA-256, else
PyTorch's against ONNX Runtime's. BENCHMARKS.md, "Byte modules".

    PYTHONPATH=python /usr/bin/python3 scripts/bytemodule_bench.py BASE [N]

(python/ort must hold onnxruntime-node: cd python/ort && npm ci
--ignore-scripts.) Prints one JSON object: torch's version and threads,
torch.jit.load's seconds, the first three calls' (one message each, a
fresh process), the median of five more single-message calls, the
seconds a message of one batch of N (after a warm-up), ONNX Runtime's
version, session and batch seconds a message, and how many digests
matched.
"""

import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

import tcforge_torch
from tcforge_torch import digest

# Runs in a fresh interpreter: torch.jit.load alone, no tcforge.
PYTORCH = r"""
import sys, time, json, torch
path, msgfile = sys.argv[1:3]
lines = open(msgfile).read().split("\n")[:-1]  # a 0-byte message is an empty line
n, msgs = int(lines[0][1:]), [bytes.fromhex(l) for l in lines[1:]]
t = time.perf_counter(); m = torch.jit.load(path); load = time.perf_counter() - t
batch = torch.zeros(len(msgs), n, dtype=torch.uint8)
for i, x in enumerate(msgs):
    batch[i, :len(x)] = torch.tensor(list(x), dtype=torch.uint8)
lengths = torch.tensor([len(x) for x in msgs])
def call(i):
    t = time.perf_counter(); m(batch[i, :len(msgs[i])]); return time.perf_counter() - t
first = [round(call(i), 3) for i in range(3)]
single = sorted(call(i) for i in range(3, 8))[2]
with torch.no_grad():
    m(batch[:2], lengths[:2])
    t = time.perf_counter(); out = m(batch, lengths); per = (time.perf_counter() - t) / len(msgs)
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "load_s": round(load, 2),
                  "first_calls_s": first, "single_s": round(single, 4), "batch_s_per_msg": round(per, 4),
                  "digests": [r.numpy().tobytes().hex() for r in out]}))
"""


def main(base, count):
    model = tcforge_torch.load(base + ".json")
    bi = digest._byte_interface(model)
    cp = model.cfg["computes"]
    preset = (cp.get("params") or {}).get("preset")
    ref = {"sha3-256": hashlib.sha3_256, "sha256": hashlib.sha256}.get(preset) if bi.min_len < bi.max_len else None
    rng = random.Random(25)
    msgs = [bytes(rng.randrange(256) for _ in range(rng.randint(bi.min_len, bi.max_len))) for _ in range(count)]
    width = bi.n - bi.msg_start  # the ONNX graph's message region
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "messages")
        with open(path, "w") as f:
            f.write(f"#{width}\n" + "".join(m.hex() + "\n" for m in msgs))
        pt = json.loads(subprocess.run([sys.executable, "-c", PYTORCH, base + ".pt", path],
                                       check=True, capture_output=True, text=True).stdout)
        ort_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "ort")
        ort = json.loads(subprocess.run(["node", "check.mjs", os.path.abspath(base + ".onnx"), path], cwd=ort_dir,
                                        check=True, capture_output=True, text=True).stdout)
    want = [ref(m).hexdigest() for m in msgs] if ref else ort["digests"]
    res = {"model": os.path.basename(base), "messages": count, "reference": preset if ref else "ONNX Runtime's digests"}
    res.update({k: v for k, v in pt.items() if k != "digests"})
    res["pytorch_correct"] = sum(a == b for a, b in zip(pt["digests"], want))
    res.update({"onnxruntime": ort["version"], "ort_session_s": round(ort["load_seconds"], 2),
                "ort_batch_s_per_msg": round(ort["seconds_per_message"], 4),
                "ort_correct": sum(a == b for a, b in zip(ort["digests"], want))})
    res["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(res))
    return 0 if res["pytorch_correct"] == res["ort_correct"] == count else 1


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 64))
