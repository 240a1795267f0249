pipeline "p" {
  matrix {
    a = []
  }
  construction "keccak" {}
  layerer "reifier" {}
}
