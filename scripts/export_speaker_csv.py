import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.analysis import export_speakers

export_speakers(snakemake.input[0], snakemake.output[0])
