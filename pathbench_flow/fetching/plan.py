"""Which models and LMs a config's evaluators use, and where fetching puts them.

With ``fetch.enabled``, every model option naming a checkpoint of the lock (the defaults
are PathBench's, all in the lock) is replaced by its fetched directory, and an evaluator that
decodes with an n-gram LM and has no ``lm`` gets PathBench's LM for each of its ASR languages.
The evaluators then see local paths, as with fetching off; the fetch rules make them exist, and
until they do, the model checks leave them to the fetch
(:func:`pathbench_flow.neural.models.plan_fetched`) while the track plan uses the identity
the lock gives (:func:`pathbench_flow.fetching.fetched_identity`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pathbench_flow import fetching, registry
from pathbench_flow.evaluators.neural import ASR_DEFAULT
from pathbench_flow.neural import models as loading

NAD_FEATURES = "wav2vec2"
"""NAD's ``features`` value that runs a model (the others read MFCCs)."""


@dataclass
class FetchPlan:
    """Hub id → fetched directory, and LM file name → fetched path, of one config."""

    models: dict[str, Path] = field(default_factory=dict)
    lms: dict[str, Path] = field(default_factory=dict)

    def targets(self) -> list[str]:
        """The records the fetch rules write: what a model job waits for."""
        return [str(d / fetching.RECORD_FILE) for _, d in sorted(self.models.items())] + [
            str(p.with_name(p.name + fetching.LM_RECORD_SUFFIX))
            for _, p in sorted(self.lms.items())
        ]


def _defaults(cls: type) -> dict[str, Any]:
    parameters = inspect.signature(cls.__init__).parameters
    return {name: p.default for name, p in parameters.items() if name in ("model", "models", "lm")}


def plan_fetches(config: dict[str, Any]) -> FetchPlan:
    """Rewrite ``config["evaluator_options"]`` for fetching (in place) and return the plan."""
    root = Path(config["fetch"]["directory"])
    plan = FetchPlan()

    def fetched(hub_id: str) -> str:
        entry = fetching.model_entry(hub_id)
        if entry is None:
            return hub_id  # a local directory or a model outside the lock: used as given
        directory = fetching.model_directory(root, hub_id)
        plan.models[hub_id] = directory
        loading.plan_fetched(directory, fetching.fetched_identity(entry))
        return str(directory)

    options_of = config["evaluator_options"]
    for name in config["evaluators"]:
        if name not in registry.names():
            continue  # the config check names it
        cls = registry.info(name).cls
        defaults = _defaults(cls)
        uses = getattr(cls, "uses", frozenset(defaults))
        options = dict(options_of.get(name, {}))
        if options.get("features", NAD_FEATURES) != NAD_FEATURES:
            continue
        if "model" in defaults and "model" in uses:
            options["model"] = fetched(options.get("model", defaults["model"]))
        languages: list[str] = []
        if "models" in defaults and "models" in uses:
            asr = options.get("models") or ASR_DEFAULT
            options["models"] = {lang: fetched(hub_id) for lang, hub_id in sorted(asr.items())}
            languages = sorted(asr)
        if "lm" in defaults and "lm" in uses and options.get("lm") is None:
            lms = fetching.default_lms()
            options["lm"] = {lang: _lm(plan, root, lms[lang]) for lang in languages if lang in lms}
        if options != options_of.get(name, {}):
            options_of[name] = options
    return plan


def _lm(plan: FetchPlan, root: Path, entry: Mapping[str, Any]) -> str:
    path = fetching.lm_path(root, entry["file"])
    plan.lms[entry["file"]] = path
    loading.plan_fetched(path, None)
    return str(path)
