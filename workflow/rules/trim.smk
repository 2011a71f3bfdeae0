rule fa_trim:
    input:
        manifest="results/{dataset}/manifest.parquet",
    output:
        "results/{dataset}/trim/{shard}.parquet",
    log:
        "logs/{dataset}/fa_trim/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        shard=lambda wc: int(wc.shard),
        settings=lambda wc: trim_settings(wc.dataset),
    script:
        "../../scripts/fa_trim.py"


rule fa_trim_reference:
    input:
        manifest="results/{dataset}/reference/manifest.parquet",
    output:
        "results/{dataset}/reference/trim/{shard}.parquet",
    log:
        "logs/{dataset}/fa_trim_reference/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        shard=lambda wc: int(wc.shard),
        settings=lambda wc: trim_settings(wc.dataset),
    script:
        "../../scripts/fa_trim.py"
