import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.analysis import correlate_dataset

correlate_dataset(
    snakemake.input[0],
    snakemake.output.parquet,
    snakemake.output.csv,
    **snakemake.params.settings,
)
