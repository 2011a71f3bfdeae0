from snakemake.utils import min_version

min_version("9.20")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/demo.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/score.smk"


rule all:
    input:
        all_targets(),
    default_target: True
