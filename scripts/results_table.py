import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import results_table

results_table(
    dict(zip(snakemake.params.datasets, snakemake.input, strict=True)),
    snakemake.params.dataset_settings,
    Path(snakemake.output.csv).parent,
    snakemake.output.pathbench,
    snakemake.output.heatmap,
    snakemake.output.comparisons_csv,
    snakemake.output.comparisons_json,
    snakemake.output.signs,
    predictors=snakemake.params.predictors,
)
