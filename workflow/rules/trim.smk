rule fa_trim:
    input:
        manifest="results/{dataset}/manifest.parquet",
    output:
        "results/{dataset}/trim/{shard}.parquet",
    params:
        shard=lambda wc: int(wc.shard),
        settings=lambda wc: trim_settings(wc.dataset),
    log:
        "logs/{dataset}/fa_trim/{shard}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/fa_trim.py"


rule fa_trim_reference:
    input:
        manifest="results/{dataset}/reference/manifest.parquet",
    output:
        "results/{dataset}/reference/trim.parquet",
    params:
        shard=None,
        settings=lambda wc: trim_settings(wc.dataset),
    log:
        "logs/{dataset}/fa_trim_reference.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/fa_trim.py"
