import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import align_correlations

align_correlations(
    snakemake.input.correlations,
    snakemake.input.signs,
    snakemake.output.csv,
    snakemake.output.csv_html,
    score_scale=snakemake.params.score_scale,
)
