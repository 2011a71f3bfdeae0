# A shared analysis track (pathbench_flow.tracks) of one shard's audio in one variant: computed once
# here and read by every measure and the open-set features that need it (score.smk,
# openset.smk). Jobs are planned only for tracks a configured consumer reads (track_plan.smk); a
# model's outputs (model tracks) only for the utterances of the languages their readers score.
rule compute_track:
    input:
        fetched=fetched_by_track,  # its model, when fetching is on (fetch.smk)
        manifests=lambda wc: [shard_rows(wc)],
        trims=lambda wc: shard_trim(wc) if wc.variant == "fa" else [],
        raw=raw_counterpart("results/{dataset}/tracks/{track}/raw/{shard}.parquet"),
        sources=track_sources(
            "results/{dataset}/tracks/{track}/{variant}/{shard}.parquet"
        ),
        audio=declared_audio(shard_audio_files),
    output:
        "results/{dataset}/tracks/{track}/{variant}/{shard}.parquet",
    log:
        "logs/{dataset}/compute_track/{track}/{variant}/{shard}.log",
    wildcard_constraints:
        track=_alternatives(sorted({*TRACKS, *TRACK_PLAN})),
    priority: lambda wc: track_priority(wc.track)
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=track_memory,
        runtime=lambda wc: track_resources(wc.track)["runtime"],
        gpu=lambda wc: track_gpu(wc.track),
    params:
        # the track's fields, its settings included: a changed model reruns the job
        track=lambda wc: asdict(planned_track(wc.track).track),
        languages=lambda wc: planned_track(wc.track).languages,
        batch_size=lambda wc: planned_track(wc.track).batch_size,
        # the tracks it reads, loaded from the sources' files
        sources=lambda wc: source_tracks(wc.track),
        version=VERSION,
    script:
        "../../scripts/compute_track.py"


# The same tracks of a reference set's shards (model tracks of the reference-audio measures).
use rule compute_track as compute_reference_track with:
    input:
        fetched=fetched_by_track,  # its model, when fetching is on (fetch.smk)
        manifests=["results/{dataset}/reference/shards/{shard}.parquet"],
        trims=lambda wc: (
            [f"results/{wc.dataset}/reference/trim/{wc.shard}.parquet"]
            if wc.variant == "fa"
            else []
        ),
        raw=raw_counterpart(
            "results/{dataset}/reference/tracks/{track}/raw/{shard}.parquet"
        ),
        sources=track_sources(
            "results/{dataset}/reference/tracks/{track}/{variant}/{shard}.parquet"
        ),
        audio=declared_audio(reference_shard_audio_files),
    output:
        "results/{dataset}/reference/tracks/{track}/{variant}/{shard}.parquet",
    log:
        "logs/{dataset}/compute_reference_track/{track}/{variant}/{shard}.log",


# A track of a whole set, test or reference, in one variant: what the reference-audio measures
# read, since each of their jobs compares its utterances with recordings of every shard. One
# job per track, variant and set instead of one per shard (track_plan.smk, set_track).
use rule compute_track as compute_set_track with:
    input:
        manifests=lambda wc: shard_slices(wc.dataset),
        trims=lambda wc: trim_tables(wc.dataset) if wc.variant == "fa" else [],
        raw=raw_counterpart("results/{dataset}/tracks/{track}/raw.parquet"),
        sources=[],  # set tracks run no model and read no other track
        audio=declared_audio(dataset_audio_files),
    output:
        "results/{dataset}/tracks/{track}/{variant}.parquet",
    log:
        "logs/{dataset}/compute_set_track/{track}/{variant}.log",


use rule compute_track as compute_reference_set_track with:
    input:
        manifests=lambda wc: shard_slices(wc.dataset, reference=True),
        trims=lambda wc: reference_trim_tables(wc.dataset) if wc.variant == "fa" else [],
        raw=raw_counterpart("results/{dataset}/reference/tracks/{track}/raw.parquet"),
        sources=[],  # set tracks run no model and read no other track
        audio=declared_audio(reference_audio_files),
    output:
        "results/{dataset}/reference/tracks/{track}/{variant}.parquet",
    log:
        "logs/{dataset}/compute_reference_set_track/{track}/{variant}.log",
