from pathbench_flow.data.score_scale import score_scale_of


rule validate_dataset:
    input:
        kaldi_inputs,
    output:
        manifest="results/{dataset}/manifest.parquet",
        report="results/{dataset}/validation.json",
    log:
        "logs/{dataset}/validate_dataset.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["validate_dataset"],
    params:
        directory=lambda wc: str(dataset_dir(wc.dataset)),
        n_shards=lambda wc: n_shards(wc.dataset),
        settings=config["validation"],
        # Echoed in the report and on the console only; aggregation applies it.
        score_scale=lambda wc: score_scale_of(config, wc.dataset),
        version=VERSION,
    script:
        "../../scripts/validate_dataset.py"


# A reference set is checked against its test set (validated first): shared recordings would
# be scored against themselves.
use rule validate_dataset as validate_reference with:
    input:
        reference_kaldi_inputs,
        test_manifest="results/{dataset}/manifest.parquet",
        test_hashes=test_set_hashes,
    output:
        manifest="results/{dataset}/reference/manifest.parquet",
        report="results/{dataset}/reference/validation.json",
    log:
        "logs/{dataset}/validate_reference.log",
    params:
        directory=lambda wc: str(reference_dir(wc.dataset)),
        test_directory=lambda wc: str(dataset_dir(wc.dataset)),
        n_shards=lambda wc: n_reference_shards(wc.dataset),
