pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
  mapers "no-attention" {}
}
