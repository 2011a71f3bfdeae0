localrules:
    shard_manifest,


# Per shard of every dataset and of its reference set: its manifest rows, the rows its
# references can come from, and the audio its jobs read. Per-shard jobs take these as inputs
# instead of the whole manifests and the whole corpus, so a changed wav reruns only the jobs
# that read it; rewriting an unchanged slice reruns nothing (Snakemake compares checksums). A
# checkpoint: the audio lists become job inputs once they are written. One job for all of them,
# with no wildcard (its number of outputs is every dataset's number of shards): after each
# checkpoint job Snakemake decides again every job that reads its outputs, over the whole DAG,
# so a checkpoint per shard cost one such pass per shard, and a job decided after one shard's
# pass but before another's could keep a stale decision to rerun (stages/shards.py).
checkpoint shard_manifest:
    input:
        manifests=[f"results/{dataset}/manifest.parquet" for dataset in DATASETS],
        references=[
            path for dataset in DATASETS for path in reference_manifest(dataset)
        ],
    output:
        rows=all_shard_files("parquet"),
        related=all_shard_files("related.parquet"),
        reference_related=all_shard_files("reference_related.parquet"),
        audio=all_shard_files("json"),
        reference_rows=all_shard_files("parquet", reference=True),
        reference_audio=all_shard_files("json", reference=True),
    log:
        "logs/shard_manifest.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["shard_manifest"],
    params:
        datasets=[shard_numbers(dataset) for dataset in DATASETS],
        reference_types=REFERENCE_TYPES if REFERENCE_EVALUATORS else [],
        shared_speaker_ids=config["validation"]["shared_speaker_ids"],
        version=VERSION,
    script:
        "../../scripts/shard_manifest.py"
