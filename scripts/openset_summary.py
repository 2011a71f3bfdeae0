import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.openset.stages import summarize

summarize(
    snakemake.input.folds,
    list(snakemake.input.heldout),
    snakemake.output.summary,
    snakemake.output.table,
    snakemake.output.plot,
)
