import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.fetch import fetch_lm

fetch_lm(snakemake.wildcards.file, snakemake.output[0], snakemake.params.lock)
