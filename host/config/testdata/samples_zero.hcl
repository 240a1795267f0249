pipeline "p" {
  samples = 0
  construction "keccak" {}
  layerer "reifier" {}
}
