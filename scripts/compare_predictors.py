import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.predictors import compare_predictors

datasets = snakemake.params.datasets
compare_predictors(
    dict(zip(datasets, snakemake.input.speakers, strict=True)),
    dict(zip(datasets, snakemake.input.correlations, strict=True)),
    snakemake.input.signs,
    snakemake.output.csv,
    snakemake.output.json,
    snakemake.output.csv_html,
    predictors=snakemake.params.predictors,
    allowlist=snakemake.params.allowlist,
    **snakemake.params.settings,
)
