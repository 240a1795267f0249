pipeline "p" {
  construction "keccak" {}
  layerer "reifier" {}
  expect "reifer" {
    depth = 3
  }
}
