import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.stages.analysis import correlate_utterances

correlate_utterances(
    snakemake.input.manifest,
    snakemake.input.utt2score,
    snakemake.input.scores,
    snakemake.output.csv,
    predictors=snakemake.params.predictors,
)
write_html_tables({snakemake.output.csv: snakemake.output.csv_html})
