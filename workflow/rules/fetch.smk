# Fetching (config `fetch`): each model and n-gram LM the configured evaluators use, pinned by
# the package's lock and verified, downloaded once by local rules (on a cluster, the submit host,
# which has internet). The model options are rewritten to the fetched paths here, before
# common.smk checks them; each job that runs a model or reads an LM takes the records of its
# own fetches as input (fetched_by_reader, fetched_by_track), so it runs after those only.
from pathbench_flow.fetching import (
    RECORD_FILE,
    LM_RECORD_SUFFIX,
    archive_path,
    lm_entry,
)
from pathbench_flow.fetching.plan import TRIMMING, FetchPlan, lock_file, plan_fetches

FETCH_DIRECTORY = config["fetch"]["directory"]
FETCH_LOCK = str(lock_file(config))
FETCH_PLAN = plan_fetches(config) if config["fetch"]["enabled"] else FetchPlan()


def fetched_by_reader(wildcards):
    """The fetch records the jobs of an evaluator read (its models and LMs)."""
    return FETCH_PLAN.of_reader(wildcards.evaluator)


def fetched_by_track(wildcards):
    """The fetch record of a model track's model (none for a track that runs no model)."""
    return FETCH_PLAN.of_model(
        dict(planned_track(wildcards.track).track.arguments).get("model_dir")
    )


def fetched_by_trim(wildcards):
    """The fetch record of the wav2vec2 trimming backend's model, for a dataset trimmed by it."""
    wav2vec2 = trim_settings(wildcards.dataset).get("backend") == "wav2vec2"
    return FETCH_PLAN.of_reader(TRIMMING) if wav2vec2 else []


rule fetch_model:
    output:
        f"{FETCH_DIRECTORY}/models/{{repo}}/{RECORD_FILE}",
    log:
        "logs/fetch/models/{repo}.log",
    localrule: True
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fetch_model"],
    params:
        hub_id=lambda wc: wc.repo.replace("--", "/", 1),
        lock=FETCH_LOCK,
        version=VERSION,
    script:
        "../../scripts/fetch_model.py"


def lm_archive(wildcards):
    """The record of the archive an LM is extracted from (none for an LM fetched alone)."""
    archive = (lm_entry(wildcards.file, FETCH_LOCK) or {}).get("archive")
    if not archive:
        return []
    return [f"{archive_path(FETCH_DIRECTORY, archive)}{LM_RECORD_SUFFIX}"]


rule fetch_lm:
    input:
        archive=lm_archive,
    output:
        f"{FETCH_DIRECTORY}/lms/{{file}}{LM_RECORD_SUFFIX}",
    log:
        "logs/fetch/lms/{file}.log",
    localrule: True
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fetch_lm"],
    params:
        lock=FETCH_LOCK,
        version=VERSION,
    script:
        "../../scripts/fetch_lm.py"


# An archive several LMs come in (Zenodo's lms.zip): downloaded and verified once, before the
# fetch_lm jobs that extract from it.
rule fetch_archive:
    output:
        f"{FETCH_DIRECTORY}/archives/{{archive}}{LM_RECORD_SUFFIX}",
    log:
        "logs/fetch/archives/{archive}.log",
    localrule: True
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fetch_lm"],
    params:
        lock=FETCH_LOCK,
        version=VERSION,
    script:
        "../../scripts/fetch_archive.py"
