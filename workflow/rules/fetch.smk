# Fetching (config `fetch`): each model and n-gram LM the configured evaluators use, pinned by
# the package's lock and verified, downloaded once by local rules (on a cluster, the submit host,
# which has internet). The model options are rewritten to the fetched paths here, before
# common.smk checks them; model jobs take FETCHED as input, so they run after the fetch.
from pathbench_flow.fetching import RECORD_FILE, LM_RECORD_SUFFIX
from pathbench_flow.fetching.plan import FetchPlan, plan_fetches

FETCH_DIRECTORY = config["fetch"]["directory"]
FETCH_PLAN = plan_fetches(config) if config["fetch"]["enabled"] else FetchPlan()
FETCHED = FETCH_PLAN.targets()


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
        version=VERSION,
    script:
        "../../scripts/fetch_model.py"


rule fetch_lm:
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
        version=VERSION,
    script:
        "../../scripts/fetch_lm.py"
