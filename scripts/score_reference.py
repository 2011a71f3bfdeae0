import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.common.staging import stage_job

# Staged dataset files are opened at their copies, and only those (pathbench_flow.common.staging).
stage_job(snakemake)

from pathbench_flow import tracks
from pathbench_flow.stages.score import score_reference

score_reference(
    snakemake.input.manifest,
    snakemake.input.reference,
    int(snakemake.wildcards.shard),
    snakemake.wildcards.evaluator,
    snakemake.wildcards.reftype,
    snakemake.output[0],
    options=snakemake.params.options,
    variant=snakemake.wildcards.variant,
    trim_paths=list(snakemake.input.trims),
    track_paths=list(snakemake.input.tracks),
    shared_speaker_ids=snakemake.params.shared_speaker_ids,
)
print(tracks.summary(), file=sys.stderr)
