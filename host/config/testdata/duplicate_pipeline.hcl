pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
}

pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
}
