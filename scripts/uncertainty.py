import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.uncertainty import uncertainty

output = snakemake.output
datasets = snakemake.params.datasets
tables = ("summary", "pairwise", "meta", "verdicts")
uncertainty(
    dict(zip(datasets, snakemake.input.correlations, strict=True)),
    dict(zip(datasets, snakemake.input.speakers, strict=True)),
    snakemake.params.dataset_settings,
    {key: output[key] for key in (*tables, "ranks", "matrix", "forest", "warnings")},
    {output[key]: output[f"{key}_html"] for key in tables},
    allowlist=snakemake.params.allowlist,
    settings=snakemake.params.settings,
    predictors=snakemake.params.predictors,
    manifest_paths=dict(zip(datasets, snakemake.input.manifests, strict=True)),
)
