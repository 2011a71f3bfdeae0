# Before the short scoring jobs (as the tracks, track_resources.smk: track_priority): the open-set
# folds, fits and held-out scores wait for every shard's features and run one after another.
rule openset_features:
    input:
        manifest=shard_rows,
        trims=shard_trim,
        audio=declared_audio(shard_audio_files),
        tracks=openset_tracks,
    output:
        "results/{dataset}/openset/features/{shard}.parquet",
    log:
        "logs/{dataset}/openset_features/{shard}.log",
    priority: EARLY
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["openset_features"],
    params:
        version=VERSION,
    script:
        "../../scripts/openset_features.py"


checkpoint openset_folds:
    input:
        openset_feature_files,
    output:
        "results/{dataset}/openset/folds.json",
    log:
        "logs/{dataset}/openset_folds.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["openset_folds"],
    params:
        version=VERSION,
        known_folds=config["openset"]["known_folds"],
        max_outer_folds=config["openset"]["max_outer_folds"],
        max_tuning_folds=config["openset"]["max_tuning_folds"],
    script:
        "../../scripts/openset_folds.py"


rule fit_candidates:
    input:
        features=openset_feature_files,
        folds="results/{dataset}/openset/folds.json",
    output:
        "results/{dataset}/openset/counts/{outer}/{tuning}.parquet",
    log:
        "logs/{dataset}/fit_candidates/{outer}/{tuning}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fit_candidates"],
    params:
        version=VERSION,
        grid=config["openset"]["grid"],
    script:
        "../../scripts/fit_candidates.py"


rule select_config:
    input:
        openset_count_files,
    output:
        "results/{dataset}/openset/selected/{outer}.json",
    log:
        "logs/{dataset}/select_config/{outer}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["select_config"],
    params:
        version=VERSION,
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
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["heldout_score"],
    params:
        version=VERSION,
    script:
        "../../scripts/heldout_score.py"


rule openset_summary:
    input:
        folds="results/{dataset}/openset/folds.json",
        heldout=openset_heldout_files,
    output:
        **report_table(
            "status",
            "results/{dataset}/openset/status",
            labels={"dataset": "{dataset}", "table": "status"},
            caption="../report/openset_status.rst",
            category="5. Open-set speaker evaluation",
            subcategory="{dataset}",
        ),
        **report_table(
            "speakers",
            "results/{dataset}/openset/speakers",
            labels={"dataset": "{dataset}", "table": "speakers"},
            caption="../report/openset_speakers.rst",
            category="5. Open-set speaker evaluation",
            subcategory="{dataset}",
        ),
        **report_table(
            "table",
            "results/{dataset}/openset/per_fold",
            labels={"dataset": "{dataset}", "table": "per outer fold"},
            caption="../report/openset_table.rst",
            category="5. Open-set speaker evaluation",
            subcategory="{dataset}",
        ),
        summary="results/{dataset}/openset/summary.json",
        plot=report(
            "results/{dataset}/plots/openset_rates.png",
            caption="../report/openset_rates.rst",
            category="5. Open-set speaker evaluation",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "figure": "rates per outer fold"},
        ),
    log:
        "logs/{dataset}/openset_summary.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["openset_summary"],
    params:
        version=VERSION,
    script:
        "../../scripts/openset_summary.py"
