# Shared analysis tracks (pathbench_flow.tracks): one file per track, variant and shard, planned
# only for the tracks a configured consumer reads, in the variants it reads. A consumer added
# later that reads an existing track adds only its own jobs. Model outputs are tracks keyed by
# model (pathbench_flow.neural.model_tracks): measures naming the same model share one.

from dataclasses import asdict
from functools import cache

from pathbench_flow.tracks import OPENSET_FEATURE_TRACKS, TRACKS, TrackUse, merge_uses

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


def planned_track(name):
    """How a track job computes track ``name``: the track, and for which utterances."""
    return TRACK_PLAN.get(name) or TrackUse(TRACKS[name])


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
