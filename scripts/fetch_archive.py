import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.fetch import fetch_archive

fetch_archive(snakemake.wildcards.archive, snakemake.output[0], snakemake.params.lock)
