"""Running the workflow under Snakemake: checks when it is parsed, what a job declares and
prints, which run ``results/`` holds, and how the scheduler and console behave.

The stages and the workflow files use it; it stands on the evaluators and the data below.
"""
