"""The evaluators shipped with pathbench; each module groups one family of measures."""
