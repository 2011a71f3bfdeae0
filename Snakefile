from snakemake.utils import min_version

min_version("9.20")


# A config given with --configfile stands alone: merged into this default it would inherit the
# demo dataset. Keys it leaves out take the schema's defaults.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/demo.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/shards.smk"
include: "workflow/rules/trim.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/openset.smk"


rule all:
    default_target: True
    input:
        all_targets(),
