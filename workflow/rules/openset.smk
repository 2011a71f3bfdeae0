def openset_feature_files(wildcards):
    return [
        f"results/{wildcards.dataset}/openset/features/{shard}.parquet"
        for shard in shards(wildcards.dataset)
    ]


def openset_folds_file(wildcards):
    return checkpoints.openset_folds.get(dataset=wildcards.dataset).output[0]


def openset_count_files(wildcards):
    n_tuning = fold_counts(openset_folds_file(wildcards))[int(wildcards.outer)]
    return [
        f"results/{wildcards.dataset}/openset/counts/{wildcards.outer}/{tuning}.parquet"
        for tuning in range(n_tuning)
    ]


def openset_heldout_files(wildcards):
    n_outer = len(fold_counts(openset_folds_file(wildcards)))
    return [
        f"results/{wildcards.dataset}/openset/heldout/{outer}.json"
        for outer in range(n_outer)
    ]


rule openset_features:
    input:
        manifest="results/{dataset}/manifest.parquet",
        trims=lambda wc: trim_tables(wc.dataset),
    output:
        "results/{dataset}/openset/features/{shard}.parquet",
    log:
        "logs/{dataset}/openset_features/{shard}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/openset_features.py"


checkpoint openset_folds:
    input:
        openset_feature_files,
    output:
        "results/{dataset}/openset/folds.json",
    params:
        known_folds=config["openset"]["known_folds"],
        max_outer_folds=config["openset"]["max_outer_folds"],
        max_tuning_folds=config["openset"]["max_tuning_folds"],
    log:
        "logs/{dataset}/openset_folds.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/openset_folds.py"


rule fit_candidates:
    input:
        features=openset_feature_files,
        folds="results/{dataset}/openset/folds.json",
    output:
        "results/{dataset}/openset/counts/{outer}/{tuning}.parquet",
    params:
        grid=config["openset"]["grid"],
    log:
        "logs/{dataset}/fit_candidates/{outer}/{tuning}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/fit_candidates.py"


rule select_config:
    input:
        openset_count_files,
    output:
        "results/{dataset}/openset/selected/{outer}.json",
    log:
        "logs/{dataset}/select_config/{outer}.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/select_config.py"


rule heldout_score:
    input:
        features=openset_feature_files,
        folds="results/{dataset}/openset/folds.json",
        selected="results/{dataset}/openset/selected/{outer}.json",
    output:
        "results/{dataset}/openset/heldout/{outer}.json",
    log:
        "logs/{dataset}/heldout_score/{outer}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/heldout_score.py"


rule openset_summary:
    input:
        folds="results/{dataset}/openset/folds.json",
        heldout=openset_heldout_files,
    output:
        summary="results/{dataset}/openset/summary.json",
        table=report(
            "results/{dataset}/openset/per_fold.csv",
            caption="../report/openset_table.rst",
            category="Open-set speaker evaluation",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "table": "per outer fold"},
        ),
        plot=report(
            "results/{dataset}/plots/openset_rates.png",
            caption="../report/openset_rates.rst",
            category="Open-set speaker evaluation",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "figure": "rates per outer fold"},
        ),
    log:
        "logs/{dataset}/openset_summary.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/openset_summary.py"
