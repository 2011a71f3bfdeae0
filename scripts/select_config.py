import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.openset.stages import select_config

select_config(list(snakemake.input), snakemake.output[0])
