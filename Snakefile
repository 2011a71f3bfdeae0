# Snakemake's default entry point, so `snakemake` from the repository root runs the workflow.
# The definition itself stays in workflow/Snakefile, where the Snakemake workflow catalog, its
# GitHub action (`snakefile: workflow/Snakefile`) and a `module` directive look for it.
#
# This file only includes that one. It does so through the call the `include:` directive makes,
# because the directive keeps the including file's default target: with it, workflow/Snakefile's
# `rule all` (default_target: True) would be forgotten and a bare `snakemake` would have nothing
# to do. Snakemake loads a main Snakefile with this same call.
workflow.include("workflow/Snakefile", overwrite_default_target=True)
