# No construction.
pipeline "p" {
  layerer "reifier" {}
}
