pipeline "other" {
  construction "keccak" {}
  layerer "reifier" {}
}

  pipeline "single" {
  construction "keccak" {}
  layerer "reifier" {}
}
