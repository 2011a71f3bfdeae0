localrules:
    aggregate_speakers,
    correlate,
    plot_dataset,
    export_speaker_csv,
    results_table,


rule aggregate_speakers:
    input:
        manifest="results/{dataset}/manifest.parquet",
        utterances=lambda wc: utterance_scores(wc.dataset)
        + reference_scores(wc.dataset),
        speakers=lambda wc: speaker_scores(wc.dataset),
    output:
        table="results/{dataset}/speakers.parquet",
        report="results/{dataset}/aggregation.json",
    log:
        "logs/{dataset}/aggregate_speakers.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["aggregate_speakers"],
    params:
        allowlist=config["correlation"]["allowlist"],
        version=VERSION,
    script:
        "../../scripts/aggregate_speakers.py"


rule correlate:
    input:
        "results/{dataset}/speakers.parquet",
    output:
        parquet="results/{dataset}/correlations.parquet",
        csv=report(
            "results/{dataset}/correlations.csv",
            caption="../report/correlations.rst",
            category="Correlations",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "table": "correlations"},
        ),
    log:
        "logs/{dataset}/correlate.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["correlate"],
    params:
        version=VERSION,
        settings=config["correlation"],
    script:
        "../../scripts/correlate.py"


rule plot_dataset:
    input:
        speakers="results/{dataset}/speakers.parquet",
        correlations="results/{dataset}/correlations.parquet",
        aggregation="results/{dataset}/aggregation.json",
    output:
        scatters=report(
            directory("results/{dataset}/plots/scatter"),
            patterns=["{metric}.png"],
            caption="../report/scatter.rst",
            category="Scatter plots",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "metric": "{metric}"},
        ),
        bars=report(
            "results/{dataset}/plots/aligned_r.png",
            caption="../report/aligned_r.rst",
            category="Correlations",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "figure": "sign-aligned r"},
        ),
    log:
        "logs/{dataset}/plot_dataset.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["plot_dataset"],
    params:
        allowlist=config["correlation"]["allowlist"],
    script:
        "../../scripts/plot_dataset.py"


rule export_speaker_csv:
    input:
        "results/{dataset}/speakers.parquet",
    output:
        directory("results/{dataset}/speaker_csv"),
    log:
        "logs/{dataset}/export_speaker_csv.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["export_speaker_csv"],
    script:
        "../../scripts/export_speaker_csv.py"


rule results_table:
    input:
        expand("results/{dataset}/correlations.parquet", dataset=DATASETS),
    output:
        csv=report(
            "results/results_table.csv",
            caption="../report/results_table.rst",
            category="Results table",
            labels={"table": "metrics × datasets"},
        ),
        parquet="results/results_table.parquet",
        heatmap=report(
            "results/plots/results_heatmap.png",
            caption="../report/heatmap.rst",
            category="Results table",
            labels={"figure": "heat map"},
        ),
        comparisons_csv=report(
            "results/comparisons.csv",
            caption="../report/comparisons.rst",
            category="Results table",
            labels={"table": "protocol comparisons (Wilcoxon)"},
        ),
        comparisons_json="results/comparisons.json",
    log:
        "logs/results_table.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["results_table"],
    params:
        datasets=DATASETS,
        dataset_settings={
            name: {
                key: config["datasets"][name][key]
                for key in ("path", "corpus", "task", "condition")
                if key in config["datasets"][name]
            }
            for name in DATASETS
        },
    script:
        "../../scripts/results_table.py"
