import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.common.staging import stage_job

# Staged dataset files are opened at their copies, and only those (pathbench_flow.common.staging).
stage_job(snakemake)

from pathbench_flow import tracks
from pathbench_flow.stages.tracks import compute_track

compute_track(
    list(snakemake.input.manifests),
    tracks.Track(**snakemake.params.track),
    snakemake.wildcards.variant,
    snakemake.output[0],
    trim_paths=list(snakemake.input.trims),
    raw_paths=list(snakemake.input.raw),
    sources=[tracks.Track(**source) for source in snakemake.params.sources],
    source_paths=list(snakemake.input.sources),
    languages=snakemake.params.languages,
    batch_size=snakemake.params.batch_size,
)
print(tracks.summary(), file=sys.stderr)
