import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.common.staging import stage_job

# Staged dataset files are opened at their copies, and only those (pathbench_flow.common.staging).
stage_job(snakemake)

from pathbench_flow import tracks
from pathbench_flow.stages.score import score_speakers

score_speakers(
    list(snakemake.input.manifest),
    snakemake.wildcards.evaluator,
    snakemake.output[0],
    options=snakemake.params.options,
    variants=snakemake.params.variants,
    trim_paths=list(snakemake.input.trims),
    track_paths=list(snakemake.input.tracks),
)
print(tracks.summary(), file=sys.stderr)
