# Pipelines around misbehaving plugins (see plugins_test.go): each bad one
# fails its own rows with a named error; the good ones must still run and
# write their results.

pipeline "good-before" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "reifier" {}
}

pipeline "panics" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "panics" {}
}

pipeline "dies" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "dies" {}
}

pipeline "hangs" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "hangs" {}
}

pipeline "lies" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "lies" {}
}

pipeline "bad-src" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "bad-src" {}
}

pipeline "bad-outputs" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "bad-outputs" {}
}

pipeline "cyclic" {
  matrix {
    rounds = [1, 2]
  }
  construction "cyclic" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "reifier" {}
}

pipeline "oldproto" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "oldproto" {}
}

pipeline "good-after" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "reifier" {}
}
