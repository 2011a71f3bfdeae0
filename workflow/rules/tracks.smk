# A shared analysis track (pathbench_flow.tracks) of one shard's audio in one variant: computed once
# here and read by every measure and the open-set features that need it (score.smk,
# openset.smk). Jobs are planned only for tracks a configured consumer reads (common.smk).
rule compute_track:
    input:
        manifest=shard_rows,
        trims=lambda wc: shard_trim(wc) if wc.variant == "fa" else [],
        audio=shard_audio_files,
    output:
        "results/{dataset}/tracks/{track}/{variant}/{shard}.parquet",
    log:
        "logs/{dataset}/compute_track/{track}/{variant}/{shard}.log",
    wildcard_constraints:
        track=_alternatives(sorted(TRACKS)),
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["compute_track"],
    params:
        settings=lambda wc: TRACKS[wc.track].settings,
        version=VERSION,
    script:
        "../../scripts/compute_track.py"


# The same tracks of a reference set's shards (read by the reference-audio measures).
use rule compute_track as compute_reference_track with:
    input:
        manifest="results/{dataset}/reference/shards/{shard}.parquet",
        trims=lambda wc: (
            [f"results/{wc.dataset}/reference/trim/{wc.shard}.parquet"]
            if wc.variant == "fa"
            else []
        ),
        audio=reference_shard_audio_files,
    output:
        "results/{dataset}/reference/tracks/{track}/{variant}/{shard}.parquet",
    log:
        "logs/{dataset}/compute_reference_track/{track}/{variant}/{shard}.log",
