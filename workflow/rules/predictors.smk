# Your own predictors (config `predictors`; docs/own-predictor.md): each CSV
# becomes the score table an evaluator writes, so from aggregation on a predictor is a metric
# like any other; then its r is tested against the best built-in measure of each category.
# PREDICTORS, the CSV checks and the `predictor` wildcard's constraint live in scope.smk, the
# helpers below in targets.smk.


localrules:
    import_predictor,
    compare_predictors,


rule import_predictor:
    input:
        csv=lambda wc: str(predictor_file(wc).path),
        manifest="results/{dataset}/manifest.parquet",
        kaldi=lambda wc: [
            str(dataset_dir(wc.dataset) / name) for name in ("spk2score", "utt2spk")
        ],
    output:
        "results/{dataset}/predictors/{predictor}.parquet",
    log:
        "logs/{dataset}/import_predictor/{predictor}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["import_predictor"],
    params:
        kind=lambda wc: predictor_file(wc).kind,
        dataset_dir=lambda wc: str(dataset_dir(wc.dataset)),
        version=VERSION,
    script:
        "../../scripts/import_predictor.py"


rule compare_predictors:
    input:
        speakers=expand(
            "results/{dataset}/speakers.parquet", dataset=PREDICTOR_DATASETS
        ),
        correlations=expand(
            "results/{dataset}/correlations.parquet", dataset=PREDICTOR_DATASETS
        ),
        # The measures' signs are the results table's, as every table of the run shows them.
        signs="results/sign_rules.csv",
    output:
        **report_table(
            "csv",
            "results/predictor_comparisons",
            labels={"table": "your predictors vs the best measures (dependent r)"},
            caption="../report/predictor_comparisons.rst",
            category="1. Results table",
        ),
        json="results/predictor_comparisons.json",
    log:
        "logs/compare_predictors.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["compare_predictors"],
    params:
        datasets=PREDICTOR_DATASETS,
        predictors=sorted(PREDICTORS),
        allowlist=config["correlation"]["allowlist"],
        settings=config["predictor_comparison"],
        version=VERSION,
    script:
        "../../scripts/compare_predictors.py"
