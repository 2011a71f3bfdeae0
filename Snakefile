from snakemake.utils import min_version

min_version("9.20")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/demo.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/trim.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/openset.smk"


rule all:
    default_target: True
    input:
        all_targets(),
