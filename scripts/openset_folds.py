import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import openset_folds

openset_folds(
    list(snakemake.input),
    snakemake.output[0],
    known_folds=snakemake.params.known_folds,
    max_outer_folds=snakemake.params.max_outer_folds,
    max_tuning_folds=snakemake.params.max_tuning_folds,
)
