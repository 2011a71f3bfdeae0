import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import export_speaker_csv

export_speaker_csv(snakemake.input[0], snakemake.output[0])
