import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.stages.analysis import correlate

correlate(
    snakemake.input[0],
    snakemake.output.parquet,
    snakemake.output.csv,
    **snakemake.params.settings,
    predictors=snakemake.params.predictors,
)
write_html_tables({snakemake.output.csv: snakemake.output.csv_html})
