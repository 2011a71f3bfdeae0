# What the run's rules read across a dataset (score tables, your predictors' files, open-set
# folds) and what a plain run builds (all_targets), and how a table enters the report.

from pathbench_flow.stages.openset import fold_counts
from pathbench_flow.predictors.config import SPEAKERS, UTTERANCES, declared_metadata


def utterance_scores(dataset):
    """Utterance score tables: the evaluators' per shard, and the predictors' given per
    utterance (predictors.smk)."""
    return [
        f"results/{dataset}/scores/{evaluator}/{shard}.parquet"
        for evaluator in UTTERANCE_EVALUATORS
        for shard in shards(dataset)
    ] + predictor_scores(dataset, UTTERANCES)


def reference_scores(dataset):
    return [
        f"results/{dataset}/reference_scores/{evaluator}/{variant}/{reftype}/{shard}.parquet"
        for evaluator in REFERENCE_EVALUATORS
        for variant in variants(evaluator)
        for reftype in REFERENCE_TYPES
        for shard in shards(dataset)
    ]


def predictor_file(wildcards):
    return PREDICTORS[wildcards.predictor].files[wildcards.dataset]


def predictor_scores(dataset, kind):
    """The score tables of the predictors given for ``dataset`` per ``kind`` (speakers or
    utterances): aggregation reads them beside the evaluators' of that level."""
    return [
        f"results/{dataset}/predictors/{name}.parquet"
        for name, predictor in PREDICTORS.items()
        if dataset in predictor.files and predictor.files[dataset].kind == kind
    ]


def predictor_metadata(dataset=None):
    """Direction and category of the predictors (of ``dataset``, or all), for the stages that
    look a metric's up through its evaluator."""
    return declared_metadata(
        {
            name: predictor
            for name, predictor in PREDICTORS.items()
            if dataset is None or dataset in predictor.files
        }
    )


def speaker_scores(dataset):
    """Speaker score tables: the speaker-level evaluators', and the predictors' given per
    speaker (predictors.smk)."""
    return [
        f"results/{dataset}/speaker_scores/{evaluator}.parquet"
        for evaluator in SPEAKER_EVALUATORS
    ] + predictor_scores(dataset, SPEAKERS)


def openset_feature_files(wildcards):
    return [
        f"results/{wildcards.dataset}/openset/features/{shard}.parquet"
        for shard in shards(wildcards.dataset)
    ]


def openset_folds_file(wildcards):
    folds = checkpoints.openset_folds.get(dataset=wildcards.dataset).output[0]
    # Opened through Snakemake, which fetches it first when it lives in a storage provider.
    with folds.open():
        return folds


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


def intermediate_targets(dataset):
    """Every per-stage file of a dataset, so that a deleted one is rebuilt by a plain run."""
    targets = [
        f"results/{dataset}/manifest.parquet",
        *(f"results/{dataset}/shards/{shard}.parquet" for shard in shards(dataset)),
        # A reference set is trimmed only for the reference-audio measures that read it.
        *trim_tables(dataset, reference=bool(REFERENCE_EVALUATORS)),
        *utterance_scores(dataset),
        *reference_scores(dataset),
        *speaker_scores(dataset),
        *planned_tracks(dataset),
        f"results/{dataset}/speakers.parquet",
    ]
    if reference_dir(dataset) is not None:
        targets.append(f"results/{dataset}/reference/manifest.parquet")
    if OPENSET_ENABLED:
        targets += [
            f"results/{dataset}/openset/features/{shard}.parquet"
            for shard in shards(dataset)
        ]
    return targets


def all_targets():
    targets = [
        "results/results_table.csv",
        "results/pathbench_table.csv",
        "results/comparisons.csv",
        "results/plots/results_heatmap.png",
        # Your predictors against the built-in measures, when there are any.
        *(["results/predictor_comparisons.csv"] if PREDICTORS else []),
    ]
    for dataset in DATASETS:
        targets += intermediate_targets(dataset)
        targets += [
            f"results/{dataset}/correlations.csv",
            f"results/{dataset}/plots/aligned_r.png",
            f"results/{dataset}/speaker_csv",
        ]
        if utterance_ratings(dataset):
            targets.append(f"results/{dataset}/utterance_correlations.csv")
        if OPENSET_ENABLED:
            targets.append(f"results/{dataset}/openset/summary.json")
    return targets


def report_table(name, stem, labels, **flags):
    """Output `name`, a table the report lists as `stem`.csv, offered as a download, and
    output `name`_html, its rendering as a page (pathbench_flow.reporting.html_table), which the
    report shows. Both carry the table's caption and place; the `format` label tells them
    apart, since the report keeps one item per set of labels."""
    return {
        output: report(
            f"{stem}.{extension}",
            labels={**labels, "format": extension.upper()},
            **flags,
        )
        for output, extension in ((name, "csv"), (f"{name}_html", "html"))
    }
