pipeline "p" {
  jobs = 0
  construction "keccak" {}
  layerer "reifier" {}
}
