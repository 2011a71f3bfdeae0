# Fetching (config `fetch`): each model and n-gram LM the configured evaluators use, pinned by
# the package's lock and verified, downloaded once by local rules (on a cluster, the submit host,
# which has internet). The model options are rewritten to the fetched paths here, before
# scope.smk checks them; each job that runs a model or reads an LM takes the records of its
# own fetches as input (fetched_by_reader and the others, inputs.smk): it waits for those only.
from pathbench_flow.fetching import RECORD_FILE, LM_RECORD_SUFFIX
from pathbench_flow.fetching.lms import DIRECTORY_SUFFIX, lm_directory
from pathbench_flow.fetching.plan import FetchPlan, lock_file, plan_fetches

FETCH_DIRECTORY = config["fetch"]["directory"]
FETCH_LOCK = str(lock_file(config))
FETCH_PLAN = plan_fetches(config) if config["fetch"]["enabled"] else FetchPlan()


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


rule fetch_lm:
    input:
        # the directory of the archive the LM's member is read from
        directory=lambda wc: lm_directory(FETCH_DIRECTORY, wc.file, FETCH_LOCK),
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


# The archive the LMs come in (Zenodo's lms.zip, 35 GB): its end and central directory read
# by byte ranges and recorded once, before the fetch_lm jobs download the members they need
# (the whole archive, if its server ignores byte ranges).
rule fetch_archive:
    output:
        f"{FETCH_DIRECTORY}/archives/{{archive}}{DIRECTORY_SUFFIX}",
    log:
        "logs/fetch/archives/{archive}.log",
    localrule: True
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["fetch_archive"],
    params:
        lock=FETCH_LOCK,
        version=VERSION,
    script:
        "../../scripts/fetch_archive.py"
