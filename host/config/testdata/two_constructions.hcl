pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
  construction "sha2" {}
}
