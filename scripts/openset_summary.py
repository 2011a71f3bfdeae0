import sys

sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.stages.openset import openset_summary

output = snakemake.output
openset_summary(
    snakemake.input.folds,
    list(snakemake.input.heldout),
    output.summary,
    output.table,
    output.plot,
    output.status,
    output.speakers,
    {
        output.status: output.status_html,
        output.speakers: output.speakers_html,
        output.table: output.table_html,
    },
)
