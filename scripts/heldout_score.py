import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import heldout_score

heldout_score(
    list(snakemake.input.features),
    snakemake.input.folds,
    int(snakemake.wildcards.outer),
    snakemake.input.selected,
    snakemake.output[0],
)
