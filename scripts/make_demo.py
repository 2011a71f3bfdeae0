import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.demo.corpus import make_demo

make_demo(snakemake.params.root, **snakemake.params.settings)
