import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.stages.analysis import results_table

results_table(
    dict(zip(snakemake.params.datasets, snakemake.input, strict=True)),
    snakemake.params.dataset_settings,
    Path(snakemake.output.csv).parent,
    snakemake.output.pathbench,
    snakemake.output.heatmap,
    snakemake.output.comparisons_csv,
    snakemake.output.comparisons_json,
    predictors=snakemake.params.predictors,
)
write_html_tables(
    {
        snakemake.output.csv: snakemake.output.csv_html,
        snakemake.output.pathbench: snakemake.output.pathbench_html,
        snakemake.output.comparisons_csv: snakemake.output.comparisons_csv_html,
        snakemake.output.published: snakemake.output.published_html,
    }
)
