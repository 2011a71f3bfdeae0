# The shards of a dataset and of its reference set: the files the shard checkpoint writes, each
# job's slice of the manifest and audio, the reference jobs a shard's texts need, and the shard
# count planned from utt2spk's lines, so that a dry run lists every per-shard job.

from functools import cache

from pathbench_flow.data.manifest import shard_count
from pathbench_flow.data.shard_plan import shard_audio
from pathbench_flow.data.shard_plan import reference_shards as reference_shard_numbers


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
