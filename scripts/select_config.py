import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import select_config

select_config(list(snakemake.input), snakemake.output[0])
