import re
from dataclasses import asdict
from functools import cache
from pathlib import Path

from pathbench_flow.evaluators import registry

from pathbench_flow.runtime import results_run, snakemake_patches
from pathbench_flow.evaluators.categories import AUDIO, CATEGORIES
from pathbench_flow.data.manifest import shard_count
from pathbench_flow.fetching.plan import TRIMMING
from pathbench_flow.stages.openset import fold_counts
from pathbench_flow.openset.config import openset_enabled
from pathbench_flow.runtime.preflight import check_config
from pathbench_flow.predictors.check import check_predictors
from pathbench_flow.predictors.config import (
    SPEAKERS,
    UTTERANCES,
    declared_metadata,
    predictors_of,
)
from pathbench_flow.data.shard_plan import shard_audio
from pathbench_flow.data.shard_plan import reference_shards as reference_shard_numbers
from pathbench_flow.tracks import OPENSET_FEATURE_TRACKS, TRACKS, TrackUse, merge_uses

KALDI_FILES = (
    "wav.scp",
    "text",
    "utt2spk",
    "segments",
    "spk2score",
    "spk2gender",
    "spk2age",
    "utt2group",
    "language",
    "wav_hash.scp",
)
# Problems the schema cannot see (evaluator options, dataset directories) stop the run here,
# in the main process: a job parses the same config but may see none of the datasets.
if workflow.is_main_process:
    check_config(config, generated=is_generated)
    # Your own predictors' CSVs (config `predictors`) against their datasets' rated speakers.
    check_predictors(config, generated=is_generated)

DATASETS = sorted(config["datasets"])
# Your own predictors (README, "Evaluate your own predictor"): metrics read from CSVs
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
# `replace_results` (pathbench_flow/runtime/results_run.py). The config files are those read so far:
# the ones given, or the Snakefile's default; a storage run's shipped facts come later.
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


def dataset_dir(name):
    return Path(config["datasets"][name]["path"])


def reference_dir(name):
    reference = config["datasets"][name].get("reference")
    return Path(reference) if reference else None


def utterance_ratings(name):
    """The dataset's utt2score (utterance-level ratings, e.g. PathBench's YouTube set), or
    None: validation does not read it, the utterance-level correlation does."""
    path = dataset_dir(name) / "utt2score"
    return str(path) if FACTS.has(dataset_dir(name), "utt2score") else None


def _validation_files(directory):
    """The Kaldi files and audio that validation of ``directory`` reads.

    Optional Kaldi files join the inputs only when present. A directory the workflow generates
    lists the files its rule writes; its audio is known once that rule has run.
    """
    kaldi = generated_kaldi_files(directory)
    if kaldi is None:
        kaldi = [
            str(directory / name) for name in KALDI_FILES if FACTS.has(directory, name)
        ]
    return kaldi + FACTS.audio(directory)


def kaldi_inputs(wildcards):
    """Everything a dataset's validation reads: its Kaldi files and its audio."""
    return _validation_files(dataset_dir(wildcards.dataset))


def reference_kaldi_inputs(wildcards):
    return _validation_files(reference_dir(wildcards.dataset))


def espeak_build(phonemises):
    """The build, as the input of a job that phonemises while fetching is on; else nothing."""
    return [str(ESPEAK_BUILD)] if phonemises and config["fetch"]["enabled"] else []


def phonemises(evaluator):
    """Whether an evaluator's jobs phonemise (a model measure that declares espeak-ng)."""
    return "espeak" in getattr(EVALUATOR_INFO[evaluator].cls, "uses", ())


def fetched_by_reader(wildcards):
    """The fetch records the jobs of an evaluator read (its models and LMs)."""
    return FETCH_PLAN.of_reader(wildcards.evaluator)


def fetched_by_track(wildcards):
    """The fetch records of a model track's model and LM (none for a track that runs no
    model)."""
    arguments = dict(planned_track(wildcards.track).track.arguments)
    return FETCH_PLAN.of_model(arguments.get("model_dir")) + FETCH_PLAN.of_lm(
        arguments.get("lm")
    )


def fetched_by_trim(wildcards):
    """The fetch record of the wav2vec2 trimming backend's model, for a dataset trimmed by it."""
    wav2vec2 = trim_settings(wildcards.dataset).get("backend") == "wav2vec2"
    return FETCH_PLAN.of_reader(TRIMMING) if wav2vec2 else []


def trim_settings(name):
    """Trimming settings of a dataset: the global ones, with its own backend if it sets one."""
    settings = dict(config["fa_trim"])
    backend = config["datasets"][name].get("trim_backend")
    return settings | ({"backend": backend} if backend else {})


def trim_tables(dataset, reference=False):
    """Every fa_trim table of a dataset (and its reference set); none when nothing is trimmed."""
    if not NEEDS_TRIM:
        return []
    tables = [f"results/{dataset}/trim/{shard}.parquet" for shard in shards(dataset)]
    return tables + (reference_trim_tables(dataset) if reference else [])


def reference_trim_tables(dataset):
    """Every fa_trim table of a dataset's reference set (none without one, or untrimmed)."""
    if not NEEDS_TRIM or reference_dir(dataset) is None:
        return []
    return [
        f"results/{dataset}/reference/trim/{shard}.parquet"
        for shard in reference_shards(dataset)
    ]


def shard_trim(wildcards):
    """The fa_trim table of one shard, for the per-shard jobs (none when nothing is trimmed)."""
    if not NEEDS_TRIM:
        return []
    return [f"results/{wildcards.dataset}/trim/{wildcards.shard}.parquet"]


def utterance_trims(wildcards):
    """The trim table an utterance-scoring job reads: its shard's, for the fa variant only."""
    return shard_trim(wildcards) if "fa" in variants(wildcards.evaluator) else []


def speaker_trims(wildcards):
    """The trim tables a speaker-scoring job reads: every shard's, for the fa variant only."""
    if "fa" not in variants(wildcards.evaluator):
        return []
    return trim_tables(wildcards.dataset)


def shard_rows(wildcards):
    return f"results/{wildcards.dataset}/shards/{wildcards.shard}.parquet"


def shard_files(dataset, shard_names, suffix, reference=False):
    """Files the shard checkpoint writes for shards of a dataset (or of its reference set):
    ``<shard>.<suffix>`` under ``shards/``."""
    root = f"results/{dataset}/reference" if reference else f"results/{dataset}"
    return [f"{root}/shards/{shard}.{suffix}" for shard in shard_names]


def _shard_names(dataset, reference=False):
    """The shards of a dataset's test set, or of its reference set."""
    return reference_shards(dataset) if reference else shards(dataset)


def shard_slices(dataset, reference=False):
    """The manifest rows of every shard of a dataset (or of its reference set)."""
    return shard_files(dataset, _shard_names(dataset, reference), "parquet", reference)


def shard_numbers(dataset):
    """The shards the shard checkpoint (shards.smk) writes for ``dataset``: its test set's and
    its reference set's (none without one), in the order of its outputs."""
    return {
        "shards": [int(shard) for shard in shards(dataset)],
        "reference_shards": [int(shard) for shard in reference_shards(dataset)],
    }


@cache
def all_shard_files(suffix, reference=False):
    """The shard checkpoint's ``<shard>.<suffix>`` files of every dataset (or reference set)."""
    return [
        path
        for dataset in DATASETS
        for path in shard_files(
            dataset, _shard_names(dataset, reference), suffix, reference
        )
    ]


def _shard_plan(dataset, shard, reference=False):
    """The audio plan the shard checkpoint wrote for a shard (its jobs' audio inputs are read
    from it), once the checkpoint has run."""
    written = checkpoints.shard_manifest.get().output
    # Snakemake's files for the declared paths (storage-mapped ones too), in declared order.
    plans = dict(
        zip(
            all_shard_files("json", reference),
            written.reference_audio if reference else written.audio,
            strict=True,
        )
    )
    plan = plans[shard_files(dataset, [shard], "json", reference)[0]]
    # Opened through Snakemake, which fetches it first when it lives in a storage provider.
    with plan.open():
        return plan


def shard_audio_files(wildcards):
    """The audio a per-shard job of the test dataset reads."""
    return shard_audio(_shard_plan(wildcards.dataset, wildcards.shard))


def reference_shard_audio_files(wildcards):
    return shard_audio(_shard_plan(wildcards.dataset, wildcards.shard, reference=True))


def reference_job_rows(wildcards):
    """The test-set rows a reference job reads: its shard's and, for ``all`` references, every
    row sharing a text with them (other speakers' recordings are references too). ``control``
    references all come from the reference set, so a job of theirs reads its own rows only,
    which an edit in another shard leaves unchanged."""
    folder = f"results/{wildcards.dataset}/shards/{wildcards.shard}"
    return (
        f"{folder}.related.parquet"
        if wildcards.reftype == "all"
        else f"{folder}.parquet"
    )


def reference_trims(wildcards):
    """The trim tables a reference measure's fa variant reads: its shard's and its references'
    (none for the raw variant)."""
    if wildcards.variant != "fa":
        return []
    dataset = wildcards.dataset
    own_shards, other_shards = _reference_job_shards(wildcards)
    return [f"results/{dataset}/trim/{s}.parquet" for s in own_shards] + [
        f"results/{dataset}/reference/trim/{s}.parquet" for s in other_shards
    ]


def _reference_job_shards(wildcards):
    """The test-set and reference-set shards holding a reference job's utterances and their
    references (read from its shard's plan)."""
    plan = _shard_plan(wildcards.dataset, wildcards.shard)
    own, others = reference_shard_numbers(plan, wildcards.reftype)
    own_shards = sorted({wildcards.shard, *(f"{s:04d}" for s in own)})
    return own_shards, [f"{s:04d}" for s in others]


def scored_reference_audio(wildcards):
    """A reference-scoring job reads its shard's audio and every reference of its utterances."""
    return shard_audio(
        _shard_plan(wildcards.dataset, wildcards.shard), wildcards.reftype
    )


def _set_audio(dataset, reference=False):
    """All audio of a dataset's test set (or its reference set), from its shards' plans."""
    return sorted(
        {
            path
            for shard in _shard_names(dataset, reference)
            for path in shard_audio(_shard_plan(dataset, shard, reference))
        }
    )


def dataset_audio_files(wildcards):
    """All audio of a dataset (speaker-level evaluators and set tracks read every utterance)."""
    return _set_audio(wildcards.dataset)


def reference_audio_files(wildcards):
    """All audio of a dataset's reference set (its set tracks read every utterance)."""
    return _set_audio(wildcards.dataset, reference=True)


def evaluator_options(name):
    return config["evaluator_options"].get(name, {})


def reference_manifest(dataset):
    if reference_dir(dataset) is None:
        return []
    return [f"results/{dataset}/reference/manifest.parquet"]


@cache
def _directory_shards(directory):
    """Shards planned from utt2spk's line count, so a dry run already shows every job.

    A directory the workflow generates has no utt2spk before its rule runs; its size is known
    from the config, the same before and after. Counted once per process: input functions
    ask for it thousands of times a run.
    """
    if FACTS.has(directory, "utt2spk"):
        n = FACTS.utterances(directory)
    elif is_generated(directory):
        n = generated_utterance_count(directory)
    else:
        raise ValueError(f"{directory / 'utt2spk'} does not exist")
    return shard_count(n, config["shard_size"])


def n_shards(name):
    return _directory_shards(dataset_dir(name))


def n_reference_shards(name):
    return _directory_shards(reference_dir(name))


def shards(name):
    return [f"{i:04d}" for i in range(n_shards(name))]


def reference_shards(name):
    """Shards of a dataset's reference set (none without one)."""
    if reference_dir(name) is None:
        return []
    return [f"{i:04d}" for i in range(n_reference_shards(name))]


def variants(name):
    """Score variants of an evaluator: trimmed (fa) only where trimming makes sense."""
    return [v for v in VARIANTS if v == "raw" or EVALUATOR_INFO[name].trimmable]


# Shared analysis tracks (pathbench_flow.tracks): one file per track, variant and shard, planned
# only for the tracks a configured consumer reads, in the variants it reads. A consumer added
# later that reads an existing track adds only its own jobs. Model outputs are tracks keyed by
# model (pathbench_flow.neural.model_tracks): measures naming the same model share one.
TRACK_USES = {
    name: EVALUATOR_INFO[name].cls.track_uses(evaluator_options(name))
    for name in EVALUATORS
}
TRACK_PLAN = merge_uses(use for uses in TRACK_USES.values() for use in uses)


def evaluator_tracks(name):
    """The shared tracks an evaluator's jobs read with its configured options."""
    return tuple(use.track.name for use in TRACK_USES[name] if use.read)


TRACK_READERS = {
    track: [
        name
        for name in EVALUATORS
        if any(use.track.name == track for use in TRACK_USES[name])
    ]
    for track in TRACK_PLAN
}
"""Track → the evaluators that need it: read by their jobs, or as the source of a track they
read (DArtP needs the ASR log-posteriors for its n-gram transcription only)."""


FIRST = 10
"""Scheduling priority of the jobs that gate the longest ones: trimming, the speaker-scoring
jobs and the tracks they read."""
EARLY = 5
"""Priority of the jobs many others wait for (tracks, open-set features): before the short
scoring jobs (priority 0), which fill the cores at the end of a run."""


def track_priority(name):
    """Scheduling priority of a track's jobs. Tracks feed most scoring jobs and the CPPS track
    is a run's longest per-shard job (~20 s a shard on a UASpeech-sized corpus), so tracks
    come before the short jobs that read them, which then fill the cores at the end (EARLY).
    First of all come the tracks a speaker-scoring job reads (FIRST): that job waits for every
    shard's and is the longest of a run (`vsa`: 50 s), so the sooner they exist the sooner it
    runs beside the per-shard jobs instead of alone at the end."""
    readers = TRACK_READERS.get(name, [])
    return FIRST if any(reader in SPEAKER_EVALUATORS for reader in readers) else EARLY


def planned_track(name):
    """How a track job computes track ``name``: the track, and for which utterances."""
    return TRACK_PLAN.get(name) or TrackUse(TRACKS[name])


def track_resources(name):
    """A track job's memory and time: a model's when it runs one."""
    runs_model = planned_track(name).track.runs_model
    return RESOURCES["compute_model_track" if runs_model else "compute_track"]


def track_memory(wildcards, input):
    """A track job's ``mem_mb``; a model's grows with the longest utterance of the manifest
    slices the job reads (pathbench_flow/memory.py). Before the shard checkpoint has written
    them (a dry run's plan), or evaluated without a job's named inputs, it is the table's;
    Snakemake evaluates resources again before it starts a job, once its inputs exist.
    An n-gram transcription job declares at least what its LM needs (lm_memory).
    """
    track = planned_track(wildcards.track).track
    declared = track_resources(wildcards.track)["mem_mb"]
    if not track.runs_model:
        return declared
    manifests = list(getattr(input, "manifests", []))
    if manifests and all(Path(path).exists() for path in manifests):
        declared = model_track_memory(declared, longest_utterance_s(manifests))
    return max(declared, lm_memory(track))


def lm_memory(track):
    """The memory of a track's n-gram decoding (0 for a track that decodes none): a job's
    (RESOURCES' compute_track) and the LM's (pathbench_flow/memory.py, lm_job_memory), sized
    from the file the decoder opens, else the fetch record, else the fetch lock. The job
    reads the ASR log-posteriors from the ASR track's file, so no model runs beside the LM.
    """
    configured = dict(track.arguments).get("lm")
    if configured is None:
        return 0
    return RESOURCES["compute_track"]["mem_mb"] + lm_job_memory(
        configured, opened_lm_file(configured), LM_RECORD_SUFFIX, fetch_lock()
    )


@cache
def fetch_lock():
    """The fetch lock, read once: resources are evaluated on every scheduling pass."""
    return lock(FETCH_LOCK)


def track_gpu(name):
    """A model track's job asks for a GPU when a measure reading it would (uses_gpu)."""
    return gpu_request(
        any(
            EVALUATOR_INFO[reader].cls.uses_gpu(evaluator_options(reader))
            for reader in TRACK_READERS.get(name, [])
        )
    )


def openset_variant():
    """The open-set features read trimmed audio whenever trimming runs."""
    return "fa" if NEEDS_TRIM else "raw"


def track_files(dataset, names, track_variants, shard_names, reference=False):
    """Track files of shards of the test set (or of its reference set)."""
    root = f"results/{dataset}/reference" if reference else f"results/{dataset}"
    return [
        f"{root}/tracks/{track}/{variant}/{shard}.parquet"
        for track in names
        for variant in track_variants
        for shard in shard_names
    ]


def utterance_tracks(wildcards):
    """The track files of an utterance-scoring job: its shard's, in its variants."""
    name = wildcards.evaluator
    return track_files(
        wildcards.dataset, evaluator_tracks(name), variants(name), [wildcards.shard]
    )


def speaker_tracks(wildcards):
    """The track files of a speaker-scoring job: every shard's, in its variants."""
    name, dataset = wildcards.evaluator, wildcards.dataset
    return track_files(dataset, evaluator_tracks(name), variants(name), shards(dataset))


def set_track(name):
    """Whether the reference-audio measures read track ``name`` from one file per set (test or
    reference) and variant rather than per shard: every analysis that runs no model.

    Analysing a whole set takes seconds, less than the start-up of a job per shard and track
    would cost, and each reference job loads only the rows of its utterances and their
    references. A model's outputs stay per shard: a set would take it minutes to hours.
    """
    return not planned_track(name).track.runs_model


def _set_track_sets(wildcards):
    """The sets whose set tracks a reference job reads: the reference set (when there is one)
    and, for ``all`` references, the test set. A ``control`` job analyses its own utterances
    itself (a few ms each), so that an edit in another shard leaves it alone."""
    if not any(set_track(name) for name in evaluator_tracks(wildcards.evaluator)):
        return ()
    tests = ("test",) if wildcards.reftype == "all" else ()
    return tests + (("reference",) if reference_dir(wildcards.dataset) else ())


def set_track_files(dataset, names, track_variants, sets):
    """Set-track files of ``names`` for the test and/or reference set (``sets``)."""
    roots = {"test": f"results/{dataset}", "reference": f"results/{dataset}/reference"}
    return [
        f"{roots[which]}/tracks/{track}/{variant}.parquet"
        for track in names
        for variant in track_variants
        for which in sets
    ]


def set_track_variants(variants):
    """The variants of the set tracks that reference jobs of ``variants`` read.

    An ``fa`` job also analyses untrimmed audio: NAD scores a test utterance and all its
    references untrimmed when one of them has no good trim, and a recording with an explicit
    segment is compared as cut. Those analyses are the ``raw`` variant's, so the job reads its
    file too rather than computing them again (on a UASpeech-sized corpus, a quarter of the
    MFCCs of NAD's fa jobs).
    """
    return sorted({*variants, *(["raw"] if "fa" in variants else [])})


def reference_tracks(wildcards):
    """The track files of a reference-scoring job, in its variant: the set tracks it reads,
    and the model tracks of the test and reference shards holding its utterances and their
    references."""
    names = evaluator_tracks(wildcards.evaluator)
    dataset, variant = wildcards.dataset, [wildcards.variant]
    whole = [name for name in names if set_track(name)]
    files = set_track_files(
        dataset, whole, set_track_variants(variant), _set_track_sets(wildcards)
    )
    per_shard = [name for name in names if not set_track(name)]
    if per_shard:
        own_shards, other_shards = _reference_job_shards(wildcards)
        files += track_files(dataset, per_shard, variant, own_shards)
        files += track_files(dataset, per_shard, variant, other_shards, reference=True)
    return files


def openset_tracks(wildcards):
    return track_files(
        wildcards.dataset,
        OPENSET_FEATURE_TRACKS,
        [openset_variant()],
        [wildcards.shard],
    )


def planned_tracks(dataset):
    """Every track file some configured consumer of ``dataset`` reads."""
    files = {
        path
        for name in UTTERANCE_EVALUATORS + SPEAKER_EVALUATORS
        for path in track_files(
            dataset, evaluator_tracks(name), variants(name), shards(dataset)
        )
    }
    has_reference = reference_dir(dataset) is not None
    sets = ("test",) if "all" in REFERENCE_TYPES else ()
    sets += ("reference",) if has_reference else ()
    for name in REFERENCE_EVALUATORS:
        names = evaluator_tracks(name)
        whole = [track for track in names if set_track(track)]
        per_shard = [track for track in names if not set_track(track)]
        files.update(
            set_track_files(dataset, whole, set_track_variants(variants(name)), sets)
        )
        files.update(track_files(dataset, per_shard, variants(name), shards(dataset)))
        if has_reference:
            files.update(
                track_files(
                    dataset,
                    per_shard,
                    variants(name),
                    reference_shards(dataset),
                    reference=True,
                )
            )
    if OPENSET_ENABLED:
        files.update(
            track_files(
                dataset, OPENSET_FEATURE_TRACKS, [openset_variant()], shards(dataset)
            )
        )
    return sorted(files)


@cache
def _planned_track_set(dataset):
    return frozenset(planned_tracks(dataset))


def track_sources(pattern):
    """Input function of a track job: the files, of the same slices and variant, of the tracks
    its track reads (``sources``: the n-gram transcription reads the ASR log-posteriors), so
    the job loads their values instead of running their models again. ``pattern`` is formatted
    with the job's wildcards, ``track`` replaced by each source."""

    def files(wildcards):
        values = dict(wildcards.items())
        return [
            pattern.format(**(values | {"track": source}))
            for source in planned_track(wildcards.track).track.sources
        ]

    return files


def source_tracks(name):
    """The tracks a track job of ``name`` loads before it computes (``params.sources``)."""
    return [
        asdict(planned_track(source).track)
        for source in planned_track(name).track.sources
    ]


def raw_counterpart(pattern):
    """Input function of a track job: for the fa variant, the raw file of the same track and
    slices (``pattern``, formatted with the job's wildcards) when some consumer has it planned.

    Trimming leaves some recordings whole (its fallbacks, explicit segments), and for them the
    fa job would analyse again exactly the audio the raw job analysed; it reads their values
    instead (pathbench_flow.stages.tracks). No file is planned for this alone.
    """

    def files(wildcards):
        if wildcards.variant != "fa":
            return []
        path = pattern.format(**dict(wildcards.items()))
        return [path] if path in _planned_track_set(wildcards.dataset) else []

    return files


def utterance_scores(dataset):
    """Utterance score tables: the evaluators' per shard, and the predictors' given per
    utterance (predictors.smk)."""
    return [
        f"results/{dataset}/scores/{evaluator}/{shard}.parquet"
        for evaluator in UTTERANCE_EVALUATORS
        for shard in shards(dataset)
    ] + predictor_scores(dataset, UTTERANCES)


def reference_scores(dataset):
    return [
        f"results/{dataset}/reference_scores/{evaluator}/{variant}/{reftype}/{shard}.parquet"
        for evaluator in REFERENCE_EVALUATORS
        for variant in variants(evaluator)
        for reftype in REFERENCE_TYPES
        for shard in shards(dataset)
    ]


def predictor_file(wildcards):
    return PREDICTORS[wildcards.predictor].files[wildcards.dataset]


def predictor_scores(dataset, kind):
    """The score tables of the predictors given for ``dataset`` per ``kind`` (speakers or
    utterances): aggregation reads them beside the evaluators' of that level."""
    return [
        f"results/{dataset}/predictors/{name}.parquet"
        for name, predictor in PREDICTORS.items()
        if dataset in predictor.files and predictor.files[dataset].kind == kind
    ]


def predictor_metadata(dataset=None):
    """Direction and category of the predictors (of ``dataset``, or all), for the stages that
    look a metric's up through its evaluator."""
    return declared_metadata(
        {
            name: predictor
            for name, predictor in PREDICTORS.items()
            if dataset is None or dataset in predictor.files
        }
    )


def speaker_scores(dataset):
    """Speaker score tables: the speaker-level evaluators', and the predictors' given per
    speaker (predictors.smk)."""
    return [
        f"results/{dataset}/speaker_scores/{evaluator}.parquet"
        for evaluator in SPEAKER_EVALUATORS
    ] + predictor_scores(dataset, SPEAKERS)


def openset_feature_files(wildcards):
    return [
        f"results/{wildcards.dataset}/openset/features/{shard}.parquet"
        for shard in shards(wildcards.dataset)
    ]


def openset_folds_file(wildcards):
    folds = checkpoints.openset_folds.get(dataset=wildcards.dataset).output[0]
    # Opened through Snakemake, which fetches it first when it lives in a storage provider.
    with folds.open():
        return folds


def openset_count_files(wildcards):
    n_tuning = fold_counts(openset_folds_file(wildcards))[int(wildcards.outer)]
    return [
        f"results/{wildcards.dataset}/openset/counts/{wildcards.outer}/{tuning}.parquet"
        for tuning in range(n_tuning)
    ]


def openset_heldout_files(wildcards):
    n_outer = len(fold_counts(openset_folds_file(wildcards)))
    return [
        f"results/{wildcards.dataset}/openset/heldout/{outer}.json"
        for outer in range(n_outer)
    ]


def intermediate_targets(dataset):
    """Every per-stage file of a dataset, so that a deleted one is rebuilt by a plain run."""
    targets = [
        f"results/{dataset}/manifest.parquet",
        *(f"results/{dataset}/shards/{shard}.parquet" for shard in shards(dataset)),
        # A reference set is trimmed only for the reference-audio measures that read it.
        *trim_tables(dataset, reference=bool(REFERENCE_EVALUATORS)),
        *utterance_scores(dataset),
        *reference_scores(dataset),
        *speaker_scores(dataset),
        *planned_tracks(dataset),
        f"results/{dataset}/speakers.parquet",
    ]
    if reference_dir(dataset) is not None:
        targets.append(f"results/{dataset}/reference/manifest.parquet")
    if OPENSET_ENABLED:
        targets += [
            f"results/{dataset}/openset/features/{shard}.parquet"
            for shard in shards(dataset)
        ]
    return targets


def all_targets():
    targets = [
        "results/results_table.csv",
        "results/pathbench_table.csv",
        "results/comparisons.csv",
        "results/plots/results_heatmap.png",
        # Your predictors against the built-in measures, when there are any.
        *(["results/predictor_comparisons.csv"] if PREDICTORS else []),
    ]
    for dataset in DATASETS:
        targets += intermediate_targets(dataset)
        targets += [
            f"results/{dataset}/correlations.csv",
            f"results/{dataset}/plots/aligned_r.png",
            f"results/{dataset}/speaker_csv",
        ]
        if utterance_ratings(dataset):
            targets.append(f"results/{dataset}/utterance_correlations.csv")
        if OPENSET_ENABLED:
            targets.append(f"results/{dataset}/openset/summary.json")
    return targets


def report_table(name, stem, labels, **flags):
    """Output `name`, a table the report lists as `stem`.csv, offered as a download, and
    output `name`_html, its rendering as a page (pathbench_flow.reporting.html_table), which the
    report shows. Both carry the table's caption and place; the `format` label tells them
    apart, since the report keeps one item per set of labels."""
    return {
        output: report(
            f"{stem}.{extension}",
            labels={**labels, "format": extension.upper()},
            **flags,
        )
        for output, extension in ((name, "csv"), (f"{name}_html", "html"))
    }
