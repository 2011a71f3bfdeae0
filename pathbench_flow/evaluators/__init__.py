"""The evaluators shipped with pathbench-flow; each module groups one family of measures."""
