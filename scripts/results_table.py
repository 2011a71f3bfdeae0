import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import results_table

output = snakemake.output
results_table(
    dict(zip(snakemake.params.datasets, snakemake.input.correlations, strict=True)),
    snakemake.params.dataset_settings,
    Path(output.csv).parent,
    output.pathbench,
    output.heatmap,
    output.comparisons_csv,
    output.comparisons_json,
    output.signs,
    {
        output.csv: output.csv_html,
        output.pathbench: output.pathbench_html,
        output.comparisons_csv: output.comparisons_csv_html,
        output.published: output.published_html,
    },
    predictors=snakemake.params.predictors,
    interval=snakemake.input.interval,
    audio_check=snakemake.params.audio_check,
    dataset_dirs=snakemake.params.dataset_dirs,
    accept_audio_differences=snakemake.params.accept_audio_differences,
)
