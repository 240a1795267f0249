package cli

// rootLong is the root command's help: what tcforge does and the bundled
// plugins by kind (TestRootHelp holds the list to host/builtin's).
const rootLong = `tcforge compiles cryptographic hash constructions into layered threshold circuits and maps those
onto transformer weights, verifying every artifact: each circuit against the hash itself, each
layering against its circuit, each model by float32 and float64 passes against its layered circuit.
It reports depth and width laws and model shapes as tables, CSV, JSON, plots and report.html.

Bundled plugins (tcforge plugins prints each one's parameters; --plugin-dir adds your own):
  constructions  keccak (SHA-3, SHAKE, any Keccak), sha2, md5, sha1, blake2s, blake3, ascon,
                 md (Merkle–Damgård chains), merkle (Merkle trees), bristol (Bristol Fashion netlists)
  layerers       reifier (the paper's compiler), fusion (linear forms)
  mappers        no-attention (an MLP), tokens-as-gates, tokens-as-states (stock PyTorch encoder
                 layers), decoder (a causal GPT-shaped model that writes its working, then the digest)

Docs: README.md and docs/ in the source tree.`
