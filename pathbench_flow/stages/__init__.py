"""The workflow stages: one function per Snakemake rule, named after it, called by its script."""
