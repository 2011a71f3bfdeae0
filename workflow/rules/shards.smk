localrules:
    shard,
    shard_reference,


# One shard's manifest rows, the rows its references can come from, and the audio its jobs
# read. Per-shard jobs take these as inputs instead of the whole manifests and the whole
# corpus, so a changed wav reruns only the jobs that read it; rewriting an unchanged slice
# reruns nothing (Snakemake compares checksums). Checkpoints: the audio lists become job
# inputs once they are written.
checkpoint shard:
    input:
        manifest="results/{dataset}/manifest.parquet",
        reference=lambda wc: reference_manifest(wc.dataset),
    output:
        rows="results/{dataset}/shards/{shard}.parquet",
        related="results/{dataset}/shards/{shard}.related.parquet",
        reference_related="results/{dataset}/shards/{shard}.reference_related.parquet",
        audio="results/{dataset}/shards/{shard}.json",
    log:
        "logs/{dataset}/shard/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        shard=lambda wc: int(wc.shard),
        reference_types=REFERENCE_TYPES if REFERENCE_EVALUATORS else [],
        version=VERSION,
    script:
        "../../scripts/shard_manifest.py"


checkpoint shard_reference:
    input:
        manifest="results/{dataset}/reference/manifest.parquet",
        reference=[],
    output:
        rows="results/{dataset}/reference/shards/{shard}.parquet",
        audio="results/{dataset}/reference/shards/{shard}.json",
    log:
        "logs/{dataset}/shard_reference/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        shard=lambda wc: int(wc.shard),
        reference_types=[],
        version=VERSION,
    script:
        "../../scripts/shard_manifest.py"
