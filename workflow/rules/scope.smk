# What this run covers, read from the config once: its datasets, evaluators (by level and
# category), reference types and variants, your own predictors, whether open-set runs; the checks
# the schema cannot make; the record of the run results/ holds; and the workflow's one global
# wildcard_constraints block (tests/test_rule_conventions.py). Every later rule file reads these.

import re

from pathbench_flow.evaluators import registry
from pathbench_flow.runtime import results_run, snakemake_patches
from pathbench_flow.evaluators.categories import AUDIO
from pathbench_flow.openset.config import openset_enabled
from pathbench_flow.runtime.preflight import check_config
from pathbench_flow.predictors.check import check_predictors
from pathbench_flow.predictors.config import predictors_of

# Problems the schema cannot see (evaluator options, dataset directories) stop the run here,
# in the main process: a job parses the same config but may see none of the datasets.
if workflow.is_main_process:
    check_config(config, generated=is_generated)
    # Your own predictors' CSVs (config `predictors`) against their datasets' rated speakers.
    check_predictors(config, generated=is_generated)

DATASETS = sorted(config["datasets"])
# Your own predictors (docs/own-predictor.md): metrics read from CSVs
# (predictors.smk), and the datasets they have a CSV for, in config order.
PREDICTORS = predictors_of(config)
PREDICTOR_DATASETS = [
    name
    for name in config["datasets"]
    if any(name in predictor.files for predictor in PREDICTORS.values())
]
# Open-set runs only when `openset.enabled` says so; a block without it warns (docs/openset.md).
OPENSET_ENABLED = openset_enabled(config["openset"], logger.warning)
EVALUATORS = list(config["evaluators"])
EVALUATOR_INFO = {name: registry.info(name) for name in EVALUATORS}
REFERENCE_EVALUATORS = [
    n for n in EVALUATORS if EVALUATOR_INFO[n].category == AUDIO.key
]
UTTERANCE_EVALUATORS = [
    n
    for n in EVALUATORS
    if EVALUATOR_INFO[n].level == "utterance" and n not in REFERENCE_EVALUATORS
]
SPEAKER_EVALUATORS = [n for n in EVALUATORS if EVALUATOR_INFO[n].level == "speaker"]
REFERENCE_TYPES = list(config["reference_types"])
VARIANTS = list(config["variants"])
NEEDS_TRIM = "fa" in VARIANTS
# results/ holds one configuration's run at a time: in the main process, a real run or a report
# of another configuration stops before any job while that run's results are there, unless
# `replace_results` (pathbench_flow/runtime/results_run.py). The config files are those read so
# far: the ones given, or the Snakefile's default; a storage run's shipped facts come later.
RUN = results_run.RunRecord.of(
    workflow.configfiles, workflow.config_settings.config_args, config, is_generated
)
if workflow.is_main_process:
    snakemake_patches.patch_results_check(
        workflow, RUN, replace=config.get("replace_results", False)
    )


def _alternatives(names):
    return "|".join(re.escape(name) for name in names) or "^$"


wildcard_constraints:
    dataset=_alternatives(DATASETS),
    evaluator=_alternatives(EVALUATORS),
    reftype=_alternatives(REFERENCE_TYPES),
    variant=_alternatives(VARIANTS),
    # Your own predictors (predictors.smk). One global block for the whole workflow: a later
    # one drops these constraints from the outputs mapped to a storage provider.
    predictor=_alternatives(PREDICTORS),
    shard=r"\d+",
    outer=r"\d+",
    tuning=r"\d+",


def evaluator_options(name):
    return config["evaluator_options"].get(name, {})


def variants(name):
    """Score variants of an evaluator: trimmed (fa) only where trimming makes sense."""
    return [v for v in VARIANTS if v == "raw" or EVALUATOR_INFO[name].trimmable]
