pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
  layerer "reifier" {}
}
