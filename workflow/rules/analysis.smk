from pathbench_flow.data.pathbench_corpora import CHECK_FILE
from pathbench_flow.data.score_scale import score_scale_of
from pathbench_flow.evaluators.categories import CATEGORIES
from pathbench_flow.reporting.results_table import results_columns
from pathbench_flow.stages.analysis import pathbench_audio

# The results table orders the datasets outside PathBench's columns as the config lists them.
TABLE_DATASETS = list(config["datasets"])
# Two datasets in one results-table column, or a task without a corpus, stop the run here,
# before any job, rather than at the results table at its end.
results_columns(config["datasets"])
# The audio check `pathbench-flow prepare-pathbench` writes into the datasets root, which
# says per column whether its audio is PathBench's; an input only when it exists, so a new
# check rewrites the tables.
AUDIO_CHECK = (
    str(Path(config["datasets_root"], CHECK_FILE))
    if config.get("datasets_root")
    else None
)
# Each dataset's test and reference directories, whose recordings the check covers.
DATASET_DIRS = {
    name: [
        config["datasets"][name][key]
        for key in ("path", "reference")
        if key in config["datasets"][name]
    ]
    for name in TABLE_DATASETS
}
# A column whose audio differs from PathBench's stops the run here, before any job, rather than
# at the results table at its end (the stage checks again, for a check rewritten meanwhile).
if AUDIO_CHECK and Path(AUDIO_CHECK).is_file():
    pathbench_audio(
        results_columns(config["datasets"]),
        AUDIO_CHECK,
        DATASET_DIRS,
        config["accept_audio_differences"],
    )


localrules:
    aggregate_speakers,
    correlate,
    align_correlations,
    correlate_utterances,
    plot_dataset,
    export_speaker_csv,
    results_table,
    uncertainty,


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
        # Where the ratings become the ground truth: negated for a severity scale.
        score_scale=lambda wc: score_scale_of(config, wc.dataset),
        version=VERSION,
    script:
        "../../scripts/aggregate_speakers.py"


rule correlate:
    input:
        "results/{dataset}/speakers.parquet",
    output:
        "results/{dataset}/correlations.parquet",
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
        predictors=lambda wc: predictor_metadata(wc.dataset),
    script:
        "../../scripts/correlate.py"


# The readers' table of one dataset's correlations: it waits for the results table, whose
# sign alignment (PathBench's vote counts every dataset) it applies.
rule align_correlations:
    input:
        correlations="results/{dataset}/correlations.parquet",
        signs="results/sign_rules.csv",
    output:
        **report_table(
            "csv",
            "results/{dataset}/correlations",
            labels={"dataset": "{dataset}", "table": "correlations"},
            caption="../report/correlations.rst",
            category="3. Correlations",
            subcategory="{dataset}",
        ),
    log:
        "logs/{dataset}/align_correlations.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["align_correlations"],
    params:
        score_scale=lambda wc: score_scale_of(config, wc.dataset),
        version=VERSION,
    script:
        "../../scripts/align_correlations.py"


# Planned for datasets that ship utt2score (all_targets): PathBench's utterance-level
# correlations, beside the speaker-level ones in the report.
rule correlate_utterances:
    input:
        manifest="results/{dataset}/manifest.parquet",
        utt2score=lambda wc: utterance_ratings(wc.dataset),
        scores=lambda wc: utterance_scores(wc.dataset) + reference_scores(wc.dataset),
        signs="results/sign_rules.csv",
    output:
        **report_table(
            "csv",
            "results/{dataset}/utterance_correlations",
            labels={"dataset": "{dataset}", "table": "utterance correlations"},
            caption="../report/utterance_correlations.rst",
            category="3. Correlations",
            subcategory="{dataset}",
        ),
    log:
        "logs/{dataset}/correlate_utterances.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        # The same work as the speaker-level correlation, over utterances.
        **RESOURCES["correlate"],
    params:
        predictors=lambda wc: predictor_metadata(wc.dataset),
        score_scale=lambda wc: score_scale_of(config, wc.dataset),
        version=VERSION,
    script:
        "../../scripts/correlate_utterances.py"


rule plot_dataset:
    input:
        speakers="results/{dataset}/speakers.parquet",
        correlations="results/{dataset}/correlations.parquet",
        signs="results/sign_rules.csv",
        aggregation="results/{dataset}/aggregation.json",
    output:
        scatters=report(
            directory("results/{dataset}/plots/scatter"),
            patterns=["{metric}.png"],
            caption="../report/scatter.rst",
            category="4. Scatter plots",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "metric": "{metric}"},
        ),
        bars=report(
            "results/{dataset}/plots/aligned_r.png",
            caption="../report/aligned_r.rst",
            category="3. Correlations",
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
        version=VERSION,
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
    params:
        version=VERSION,
    script:
        "../../scripts/export_speaker_csv.py"


# How certain the table's Avg, ranking and differences are, and whether each measure holds
# across corpora (pathbench_flow/stats/uncertainty.py); the results table shows the Avg's
# interval beside Avg.
rule uncertainty:
    input:
        correlations=expand(
            "results/{dataset}/correlations.parquet", dataset=TABLE_DATASETS
        ),
        speakers=expand("results/{dataset}/speakers.parquet", dataset=TABLE_DATASETS),
        # their recordings' digests: do datasets that share speakers share recordings?
        manifests=expand("results/{dataset}/manifest.parquet", dataset=TABLE_DATASETS),
    output:
        **report_table(
            "summary",
            "results/uncertainty/summary",
            labels={"table": "Avg intervals and ranks"},
            caption="../report/uncertainty_summary.rst",
            category="2. Uncertainty",
        ),
        **report_table(
            "pairwise",
            "results/uncertainty/pairwise",
            labels={"table": "pairwise differences"},
            caption="../report/uncertainty_pairwise.rst",
            category="2. Uncertainty",
        ),
        **report_table(
            "meta",
            "results/uncertainty/meta_analysis",
            labels={"table": "meta-analysis across corpora"},
            caption="../report/uncertainty_meta.rst",
            category="2. Uncertainty",
        ),
        **report_table(
            "verdicts",
            "results/uncertainty/predictor_verdicts",
            labels={"table": "your predictors, per category"},
            caption="../report/uncertainty_verdicts.rst",
            category="2. Uncertainty",
        ),
        ranks=report(
            "results/uncertainty/rank_distribution.png",
            caption="../report/uncertainty_ranks.rst",
            category="2. Uncertainty",
            labels={"figure": "rank distribution"},
        ),
        matrix=report(
            "results/uncertainty/pairwise.png",
            caption="../report/uncertainty_pairwise.rst",
            category="2. Uncertainty",
            labels={"figure": "pairwise differences"},
        ),
        forest=report(
            directory("results/uncertainty/forest"),
            patterns=["{metric}.png"],
            caption="../report/uncertainty_forest.rst",
            category="2. Uncertainty",
            subcategory="forest plots",
            labels={"figure": "forest plot", "metric": "{metric}"},
        ),
        # the stage's warnings, which the console repeats when the run ends
        warnings="results/uncertainty/warnings.txt",
    log:
        "logs/uncertainty.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["uncertainty"],
    params:
        datasets=TABLE_DATASETS,
        dataset_settings={
            name: {
                key: config["datasets"][name][key]
                for key in ("path", "corpus", "task", "condition")
                if key in config["datasets"][name]
            }
            for name in TABLE_DATASETS
        },
        allowlist=config["correlation"]["allowlist"],
        settings=config["uncertainty"],
        predictors=predictor_metadata(),
        version=VERSION,
    script:
        "../../scripts/uncertainty.py"


# The report's menu sorts its categories by name: numbered, they read as a results section
# does, the results table first (then uncertainty, per-dataset correlations, scatter plots,
# open-set in openset.smk).
rule results_table:
    input:
        correlations=expand(
            "results/{dataset}/correlations.parquet", dataset=TABLE_DATASETS
        ),
        interval="results/uncertainty/summary.csv",
        audio_check=[AUDIO_CHECK] if AUDIO_CHECK and Path(AUDIO_CHECK).is_file() else [],
    output:
        **report_table(
            "csv",
            "results/results_table",
            labels={"table": "metrics × datasets"},
            caption="../report/results_table.rst",
            category="1. Results table",
        ),
        **report_table(
            "pathbench",
            "results/pathbench_table",
            labels={"table": "PathBench's results_table.csv"},
            caption="../report/pathbench_table.rst",
            category="1. Results table",
        ),
        **report_table(
            "comparisons_csv",
            "results/comparisons",
            labels={"table": "protocol comparisons (Wilcoxon)"},
            caption="../report/comparisons.rst",
            category="1. Results table",
        ),
        # Written by the stage into the CSV's directory (PUBLISHED_VS_MEASURED_CSV).
        **report_table(
            "published",
            "results/pathbench_published_vs_measured",
            labels={"table": "PathBench's published r vs this run's"},
            caption="../report/published_vs_measured.rst",
            category="1. Results table",
        ),
        parquet="results/results_table.parquet",
        heatmap=report(
            "results/plots/results_heatmap.png",
            caption="../report/heatmap.rst",
            category="1. Results table",
            labels={"figure": "heat map"},
        ),
        comparisons_json="results/comparisons.json",
        # The one sign per metric that every table and figure of the run applies.
        signs="results/sign_rules.csv",
    log:
        "logs/results_table.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["results_table"],
    params:
        # Read by the report's caption only: the table's row groups, from the one list.
        categories=[category.table_name for category in CATEGORIES],
        datasets=TABLE_DATASETS,
        dataset_settings={
            name: {
                key: config["datasets"][name][key]
                for key in ("path", "corpus", "task", "condition")
                if key in config["datasets"][name]
            }
            for name in TABLE_DATASETS
        },
        audio_check=AUDIO_CHECK,
        dataset_dirs=DATASET_DIRS,
        accept_audio_differences=config["accept_audio_differences"],
        predictors=predictor_metadata(),
        version=VERSION,
    script:
        "../../scripts/results_table.py"
