import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.aggregate import aggregate_speakers

aggregate_speakers(
    snakemake.input.manifest,
    snakemake.input.utterances,
    snakemake.input.speakers,
    snakemake.output.table,
    snakemake.output.report,
    allowlist=snakemake.params.allowlist,
    score_scale=snakemake.params.score_scale,
)
