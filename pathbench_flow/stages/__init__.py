"""The workflow stages: one function per Snakemake rule, named after it; scripts/ call these."""
