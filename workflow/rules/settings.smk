# Read first: the config checked against its schema, and what every rule states about itself.
import os
from pathlib import Path

import yaml
from snakemake.utils import validate

from pathbench_flow import __version__
from pathbench_flow.schemas.config import check_schema, rooted_datasets
from pathbench_flow.runtime.memory import (
    declared_memory,
    lm_job_memory,
    longest_utterance_s,
    model_track_memory,
)
from pathbench_flow.fetching import LM_RECORD_SUFFIX, OFFLINE_VARIABLES, lock
from pathbench_flow.neural.lm import opened_lm_file
from pathbench_flow.runtime.kernel_environment import container_kernel_environment
from pathbench_flow.neural.models import DEVICE_VARIABLE, gpus_requested

# Every schema problem at once, one line each with its config file and line (config_schema.py);
# Snakemake's `validate` then fills in the schema's defaults. A module's `skip_validation`
# skips both.
if not workflow.modifier.skip_validation:
    check_schema(
        config,
        yaml.safe_load(
            Path(workflow.source_path("../schemas/config.schema.yaml")).read_text()
        ),
        [Path(source) for source in workflow.configfiles],
    )
validate(config, schema="../schemas/config.schema.yaml")

# Relative dataset directories are read under `datasets_root`, when the config sets one.
config["datasets"] = rooted_datasets(config["datasets"], config.get("datasets_root"))

# Where models run (config `device`): every job inherits this process's environment, and a
# cluster job's own Snakemake parses this file again, so the models of every job read it.
os.environ[DEVICE_VARIABLE] = config["device"]
# No job downloads a model (a missing one fails, naming the fix); only the fetch rules
# (fetch.smk) lift this for themselves.
os.environ.update(OFFLINE_VARIABLES)
# Jobs in a container (--sdm apptainer, even with --cleanenv) run the numeric kernels the host's
# jobs run, so both give the same bytes (pathbench_flow/kernel_environment.py).
os.environ.update(container_kernel_environment(os.environ))

# Jobs rerun when the package that computes them changes (a `params` rerun trigger).
VERSION = __version__

# Memory (MB) and wall time (minutes) of every rule, in one place; each rule reads its entry
# (a derived `use rule` shares its parent's). Cluster jobs are submitted with these; a site
# changes them with --set-resources. Every rule runs on one thread (determinism).
RESOURCES = {
    "make_demo": {"mem_mb": 1000, "runtime": 10},
    "validate_dataset": {"mem_mb": 2000, "runtime": 30},
    "shard_manifest": {"mem_mb": 1000, "runtime": 10},
    # Trimming and scoring read every file of a shard (the reference measures also the
    # recordings each utterance is compared with); speaker measures read a whole dataset.
    "fa_trim": {"mem_mb": 3000, "runtime": 120},
    "score_utterances": {"mem_mb": 3000, "runtime": 120},
    "score_reference": {"mem_mb": 4000, "runtime": 120},
    "score_speakers": {"mem_mb": 4000, "runtime": 60},
    "aggregate_speakers": {"mem_mb": 2000, "runtime": 10},
    "correlate": {"mem_mb": 2000, "runtime": 10},
    "align_correlations": {"mem_mb": 1000, "runtime": 10},
    "plot_dataset": {"mem_mb": 2000, "runtime": 10},
    "export_speaker_csv": {"mem_mb": 1000, "runtime": 10},
    "results_table": {"mem_mb": 1000, "runtime": 10},
    # The speaker bootstrap of every Avg: 2,000 replicates of PathBench's shape in a second.
    "uncertainty": {"mem_mb": 2000, "runtime": 10},
    # A predictor's CSV, and the tests of its r against the built-in measures.
    "import_predictor": {"mem_mb": 1000, "runtime": 10},
    "compare_predictors": {"mem_mb": 1000, "runtime": 10},
    # The open-set fits run EM over the candidate grid, one tuning fold per job.
    "openset_features": {"mem_mb": 3000, "runtime": 120},
    # One shared analysis track (pathbench_flow.tracks) of one shard's audio in one variant;
    # a model's outputs need the model (1.3 GB for PathBench's) and its activations; an n-gram
    # transcription's, its LM (GBs: track_resources.smk, lm_memory).
    "compute_track": {"mem_mb": 2000, "runtime": 60},
    "compute_model_track": {"mem_mb": 4000, "runtime": 120},
    "openset_folds": {"mem_mb": 2000, "runtime": 10},
    # Downloads (local rules): a checkpoint is ~1.3 GB, hashed once as it is verified.
    "fetch_model": {"mem_mb": 1000, "runtime": 120},
    "fetch_lm": {"mem_mb": 1000, "runtime": 120},
    # Zenodo's lms.zip, 35 GB, downloaded and its MD5 computed once.
    "fetch_archive": {"mem_mb": 1000, "runtime": 720},
    "fit_candidates": {"mem_mb": 3000, "runtime": 60},
    "select_config": {"mem_mb": 1000, "runtime": 10},
    "heldout_score": {"mem_mb": 2000, "runtime": 10},
    "openset_summary": {"mem_mb": 1000, "runtime": 10},
    # Downloading and compiling espeak-ng (a few minutes on one core).
    "build_espeak": {"mem_mb": 1000, "runtime": 30},
}

# The table above covers utterances up to validation's default limit of 10 minutes
# (benchmarks/long_recordings.py: every job within it, most by half). A config accepting longer
# utterances (validation.max_utterance_s) declares per further minute at least the growth
# measured from 10 minutes to 2 hours (benchmarks/README.md, "Long recordings"; at 2 hours every
# job kind of the run used at most two thirds of its declaration; the open-set features alone:
# 0.9 GB at 10 minutes, 7.5 GB at 2 hours). A model track job declares from the longest
# utterance it reads instead (track_resources.smk, track_memory): wav2vec2 takes ~22 MB per second.
MEMORY_PER_MINUTE = {
    "validate_dataset": 10,
    "fa_trim": 9,
    "compute_track": 82,
    "score_utterances": 48,
    "score_reference": 85,
    "score_speakers": 87,
    "openset_features": 80,
}
RESOURCES.update(
    declared_memory(
        RESOURCES, MEMORY_PER_MINUTE, config["validation"]["max_utterance_s"]
    )
)


def gpu_request(runs_model):
    """The `gpu` resource of a job that runs a model or not: 1 only under `device: cuda`."""
    return gpus_requested(config["device"], runs_model)
