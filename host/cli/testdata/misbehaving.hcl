# Pipelines around misbehaving layerers (see plugins_test.go): the good
# ones must still run and write their results.

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
