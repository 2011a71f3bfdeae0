import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.reporting.html_table import write_html_tables
from pathbench_flow.stages.openset import openset_summary

openset_summary(
    snakemake.input.folds,
    list(snakemake.input.heldout),
    snakemake.output.summary,
    snakemake.output.table,
    snakemake.output.plot,
    snakemake.output.status,
    snakemake.output.speakers,
)
write_html_tables(
    {
        snakemake.output.status: snakemake.output.status_html,
        snakemake.output.speakers: snakemake.output.speakers_html,
        snakemake.output.table: snakemake.output.table_html,
    }
)
