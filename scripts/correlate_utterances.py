import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.analysis import correlate_utterances

correlate_utterances(
    snakemake.input.manifest,
    snakemake.input.utt2score,
    snakemake.input.scores,
    snakemake.input.signs,
    snakemake.output.csv,
    snakemake.output.csv_html,
    predictors=snakemake.params.predictors,
    score_scale=snakemake.params.score_scale,
)
