# Every trimmed analysis waits for its shard's trims, and a speaker-scoring job for all of them:
# trimming first keeps the most work ready to run on every core (tracks.smk, track_priority).
rule fa_trim:
    input:
        fetched=fetched_by_trim,  # the wav2vec2 backend's model, when fetching is on (fetch.smk)
        manifest=shard_rows,
        audio=declared_audio(shard_audio_files),
        espeak=lambda wc: espeak_build(
            trim_settings(wc.dataset).get("backend") == "wav2vec2"
        ),
    output:
        "results/{dataset}/trim/{shard}.parquet",
    log:
        "logs/{dataset}/fa_trim/{shard}.log",
    priority: FIRST
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fa_trim"],
        gpu=lambda wc: gpu_request(
            trim_settings(wc.dataset).get("backend") == "wav2vec2"
        ),
    params:
        shard=lambda wc: int(wc.shard),
        settings=lambda wc: trim_settings(wc.dataset),
        version=VERSION,
    script:
        "../../scripts/fa_trim.py"


# The same trimming of a reference set's shards.
use rule fa_trim as fa_trim_reference with:
    input:
        fetched=fetched_by_trim,
        manifest="results/{dataset}/reference/shards/{shard}.parquet",
        audio=declared_audio(reference_shard_audio_files),
        espeak=lambda wc: espeak_build(
            trim_settings(wc.dataset).get("backend") == "wav2vec2"
        ),
    output:
        "results/{dataset}/reference/trim/{shard}.parquet",
    log:
        "logs/{dataset}/fa_trim_reference/{shard}.log",
