samples = 3

pipline "p" {}
