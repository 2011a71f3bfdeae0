# Input functions of a dataset's own files: its directories, what its validation reads, the
# fetched models and eSpeak build a job waits for, and the trim tables a scoring job reads.

from pathlib import Path

from pathbench_flow.fetching.plan import TRIMMING

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
