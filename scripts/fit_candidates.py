import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import fit_candidates

fit_candidates(
    list(snakemake.input.features),
    snakemake.input.folds,
    int(snakemake.wildcards.outer),
    int(snakemake.wildcards.tuning),
    snakemake.params.grid,
    snakemake.output[0],
)
