pipeline "p" {
  sampels = 3
  construction "keccak" {}
  layerer "reifier" {}
}
