import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench.demo import generate_corpus

generate_corpus(snakemake.params.root, **snakemake.params.settings)
