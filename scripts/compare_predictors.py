import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.stages.predictors import compare_predictors

datasets = snakemake.params.datasets
compare_predictors(
    dict(zip(datasets, snakemake.input.speakers, strict=True)),
    dict(zip(datasets, snakemake.input.correlations, strict=True)),
    snakemake.output.csv,
    snakemake.output.json,
    predictors=snakemake.params.predictors,
    allowlist=snakemake.params.allowlist,
    **snakemake.params.settings,
)
write_html_tables({snakemake.output.csv: snakemake.output.csv_html})
