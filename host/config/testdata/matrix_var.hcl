pipeline "p" {
  matrix {
    a = [1, 2]
    b = [matrix.a]
  }
  construction "keccak" {}
  layerer "reifier" {}
}
