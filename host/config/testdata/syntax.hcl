pipeline "p" {
  construction "keccak" {
    rounds = (1 +
  }
}
