pipeline "p" {
  construction {}
  layerer "reifier" "extra" {}
}

pipeline "bad/name" {
  construction "keccak" {}
  layerer "reifier" {}
}
