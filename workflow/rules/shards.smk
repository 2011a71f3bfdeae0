localrules:
    shard_manifest,
    shard_reference_manifest,


# One shard's manifest rows, the rows its references can come from, and the audio its jobs
# read. Per-shard jobs take these as inputs instead of the whole manifests and the whole
# corpus, so a changed wav reruns only the jobs that read it; rewriting an unchanged slice
# reruns nothing (Snakemake compares checksums). Checkpoints: the audio lists become job
# inputs once they are written.
checkpoint shard_manifest:
    input:
        manifest="results/{dataset}/manifest.parquet",
        reference=lambda wc: reference_manifest(wc.dataset),
    output:
        rows="results/{dataset}/shards/{shard}.parquet",
        related="results/{dataset}/shards/{shard}.related.parquet",
        reference_related="results/{dataset}/shards/{shard}.reference_related.parquet",
        audio="results/{dataset}/shards/{shard}.json",
    log:
        "logs/{dataset}/shard_manifest/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["shard_manifest"],
    params:
        shard=lambda wc: int(wc.shard),
        reference_types=REFERENCE_TYPES if REFERENCE_EVALUATORS else [],
        version=VERSION,
    script:
        "../scripts/shard_manifest.py"


# Spelled out, not `use rule shard_manifest as ...`: Snakemake 9 derives a plain rule from a
# checkpoint, and the audio lists of reference shards must stay checkpoint outputs.
checkpoint shard_reference_manifest:
    input:
        manifest="results/{dataset}/reference/manifest.parquet",
        reference=[],
    output:
        rows="results/{dataset}/reference/shards/{shard}.parquet",
        audio="results/{dataset}/reference/shards/{shard}.json",
    log:
        "logs/{dataset}/shard_reference_manifest/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["shard_manifest"],
    params:
        shard=lambda wc: int(wc.shard),
        reference_types=[],
        version=VERSION,
    script:
        "../scripts/shard_manifest.py"
