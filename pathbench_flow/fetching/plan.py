"""Which models and LMs a config's evaluators use, and where fetching puts them.

With ``fetch.enabled``, every model option naming a checkpoint of the lock (the defaults
are PathBench's, all in the lock) is replaced by its fetched directory, and an evaluator that
decodes with an n-gram LM and has no ``lm`` gets, for each of its ASR languages, the path
PathBench's code names under the fetch directory (:mod:`pathbench_flow.fetching.lms`).
The evaluators then see local paths, as with fetching off; the fetch rules make them exist, and
until they do, the model checks leave them to the fetch
(:func:`pathbench_flow.neural.models.plan_fetched`) while the track plan uses the identity
the lock gives (:func:`pathbench_flow.fetching.fetched_identity`). The wav2vec2 trimming
backend (``fa_trim.wav2vec2_model_dir``, unset or a checkpoint of the lock) reads PathBench's
phone model, fetched the same way. Each job waits for the fetches of what it reads only.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pathbench_flow import fetching
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.neural import ASR_DEFAULT
from pathbench_flow.fetching import lms
from pathbench_flow.neural import models as loading
from pathbench_flow.trimming.forced_alignment import WAV2VEC2

NAD_FEATURES = "wav2vec2"
"""NAD's ``features`` value that runs a model (the others read MFCCs)."""
TRIM_PHONE_MODEL = "facebook/wav2vec2-xlsr-53-espeak-cv-ft"
"""The phone model PathBench's FATrimmer aligns with: the wav2vec2 backend's, fetched."""
TRIMMING = "fa_trim"
"""The reader name of the trimming jobs in :attr:`FetchPlan.readers`."""


def model_record(directory: Path) -> str:
    """The record a fetch_model job writes in ``directory``: what its readers wait for."""
    return str(directory / fetching.RECORD_FILE)


def lm_record(path: Path) -> str:
    """The record a fetch_lm job writes beside ``path``."""
    return str(path.with_name(path.name + fetching.LM_RECORD_SUFFIX))


@dataclass
class FetchPlan:
    """Hub id → fetched directory, and LM file name → PathBench's named path under the fetch
    directory (the fetch writes the member PathBench opens beside it), of one config; and per
    reader (an evaluator, or :data:`TRIMMING`) the records of the fetches it reads."""

    models: dict[str, Path] = field(default_factory=dict)
    lms: dict[str, Path] = field(default_factory=dict)
    readers: dict[str, set[str]] = field(default_factory=dict)

    def targets(self) -> list[str]:
        """Every record the fetch rules write."""
        return [model_record(d) for _, d in sorted(self.models.items())] + [
            lm_record(p) for _, p in sorted(self.lms.items())
        ]

    def of_reader(self, name: str) -> list[str]:
        """The records the jobs of evaluator ``name`` (or trimming) wait for."""
        return sorted(self.readers.get(name, ()))

    def of_model(self, directory: str | Path | None) -> list[str]:
        """The record of a model track's model ``directory`` (none if it is not fetched)."""
        if directory is None:
            return []
        resolved = Path(directory).resolve()
        return [model_record(d) for d in self.models.values() if d.resolve() == resolved]

    def of_lm(self, path: str | Path | None) -> list[str]:
        """The record of an n-gram transcription track's LM ``path`` (none if not fetched)."""
        if path is None:
            return []
        resolved = Path(path).resolve()
        return [lm_record(p) for p in self.lms.values() if p.resolve() == resolved]


def _defaults(cls: type) -> dict[str, Any]:
    parameters = inspect.signature(cls.__init__).parameters
    return {name: p.default for name, p in parameters.items() if name in ("model", "models", "lm")}


def lock_file(config: Mapping[str, Any]) -> Path:
    """The lock a config fetches by (``fetch.lock``; unset: the shipped one)."""
    return Path(config["fetch"].get("lock") or fetching.LOCK_FILE)


def plan_fetches(config: dict[str, Any]) -> FetchPlan:
    """Rewrite ``config["evaluator_options"]`` (and the wav2vec2 trimming backend's model) for
    fetching, in place, and return the plan."""
    root = Path(config["fetch"]["directory"])
    locked = lock_file(config)
    plan = FetchPlan()

    def fetched(hub_id: str, reader: str) -> str:
        entry = fetching.model_entry(hub_id, locked)
        if entry is None:
            return hub_id  # a local directory or a model outside the lock: used as given
        directory = fetching.model_directory(root, hub_id)
        plan.models[hub_id] = directory
        plan.readers.setdefault(reader, set()).add(model_record(directory))
        loading.plan_fetched(directory, fetching.fetched_identity(entry))
        return str(directory)

    def fetched_lm(entry: Mapping[str, Any], reader: str) -> str:
        path = lms.lm_path(root, entry)
        plan.lms[path.name] = path
        plan.readers.setdefault(reader, set()).add(lm_record(path))
        archive = lms.archive_entry(entry["archive"], locked)
        loading.plan_fetched(path, lms.lm_identity(entry, archive))
        return str(path)

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
            options["model"] = fetched(options.get("model", defaults["model"]), name)
        languages: list[str] = []
        if "models" in defaults and "models" in uses:
            asr = options.get("models") or ASR_DEFAULT
            options["models"] = {
                lang: fetched(hub_id, name) for lang, hub_id in sorted(asr.items())
            }
            languages = sorted(asr)
        if "lm" in defaults and "lm" in uses and options.get("lm") is None:
            named = lms.pathbench_lms(locked)
            options["lm"] = {
                lang: fetched_lm(named[lang], name) for lang in languages if lang in named
            }
        if options != options_of.get(name, {}):
            options_of[name] = options
    trimming = config["fa_trim"]
    backends = {trimming.get("backend")} | {
        dataset.get("trim_backend") for dataset in config.get("datasets", {}).values()
    }
    if WAV2VEC2 in backends:
        model = trimming.get("wav2vec2_model_dir") or TRIM_PHONE_MODEL
        trimming["wav2vec2_model_dir"] = fetched(model, TRIMMING)
    return plan
