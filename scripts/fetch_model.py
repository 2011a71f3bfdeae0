import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.fetch import fetch_model

fetch_model(snakemake.params.hub_id, snakemake.output[0], snakemake.params.lock)
