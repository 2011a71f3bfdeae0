import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import openset_summary

openset_summary(
    snakemake.input.folds,
    list(snakemake.input.heldout),
    snakemake.output.summary,
    snakemake.output.table,
    snakemake.output.plot,
    snakemake.output.status,
    snakemake.output.speakers,
)
