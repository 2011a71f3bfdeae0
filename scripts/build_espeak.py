import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.espeak import build_espeak

build_espeak(
    snakemake.params.url,
    snakemake.params.sha256,
    snakemake.output[0],
    snakemake.params.lock,
)
