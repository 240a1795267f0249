pipeline "typo" {
  construction "keccak" {
    rouns = 1
  }
  layerer "reifier" {}
}

pipeline "over-max" {
  matrix {
    log_w = [6, 9]
  }
  construction "keccak" {
    log_w = matrix.log_w
  }
  layerer "reifier" {}
}

pipeline "under-min" {
  construction "keccak" {
    rate = 0
  }
  layerer "reifier" {}
}

pipeline "string-for-int" {
  construction "keccak" {
    blocks = "two"
  }
  layerer "reifier" {}
}

pipeline "fraction-for-int" {
  construction "keccak" {
    rounds = 5 / 2
  }
  layerer "reifier" {}
}

pipeline "bad-enum" {
  construction "keccak" {
    padding = "nope"
  }
  layerer "reifier" {}
}

pipeline "unknown-var" {
  matrix {
    log_w = [1]
  }
  construction "keccak" {
    log_w = matrix.logw
  }
  layerer "reifier" {}
}

pipeline "unknown-func" {
  construction "keccak" {
    log_w = sqrt(4)
  }
  layerer "reifier" {}
}

pipeline "layerer-param" {
  construction "keccak" {}
  layerer "reifier" {
    fuse = 1
  }
}

pipeline "list-for-int" {
  construction "keccak" {
    blocks = [1, 2]
  }
  layerer "reifier" {}
}

pipeline "missing-required" {
  construction "keccak" {}
  layerer "fusion" {}
}
