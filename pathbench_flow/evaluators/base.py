"""The evaluator hierarchy: the base class an evaluator inherits decides what it receives.

PathBench organises measures by the information they need: audio only, audio plus the
transcription, audio plus reference recordings of the same text, or all of a speaker's audio.
Each abstract class below turns one :class:`Item` (everything the workflow knows about an
utterance) into exactly the arguments its ``score`` method takes; that conversion, in each
class's ``evaluate``, is the only dispatch on evaluator kinds in the code base.

Trimming is a decorator, and the scoring stage is what applies it: for the ``fa`` variant it
calls ``evaluator.trimmed(trimmer)``, which returns the wrapper of the evaluator's kind
(:class:`TrimmedEvaluator` for reference-free and reference-text measures,
:class:`TrimmedSpeakerEvaluator`, :class:`TrimmedReferenceAudioEvaluator`). The wrapper cuts the
audio with the trimmer and hands it to the inner evaluator's ``score_loaded``, the entry for
audio already in memory that the kind's own ``score`` also goes through; nothing else of the
inner evaluator is wrapped. Evaluators never know whether their input was trimmed, no evaluator
has a wrapper of its own, and no variant is registered as an evaluator of its own.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.status import (
    ERROR,
    GOOD_TRIMS,
    NO_REFERENCES,
    OK,
    UNSUPPORTED_LANGUAGE,
    NoScore,
)
from pathbench_flow.data.references import ReferenceAudio
from pathbench_flow.evaluators.categories import AUDIO, LOOKUP, SIGNAL, SPEAKER, TEXT


@dataclass(frozen=True)
class Score:
    """A value, or ``None`` with the status and reason why there is none."""

    value: float | None
    status: str = OK
    message: str = ""

    @property
    def as_float(self) -> float:
        return math.nan if self.value is None else float(self.value)


@dataclass(frozen=True)
class Item:
    """Everything known about one utterance; each evaluator kind reads what it needs."""

    utt_id: str
    audio_path: str
    start: float = 0.0
    end: float = -1.0
    transcription: str = ""
    language: str = ""
    reference_audios: tuple[ReferenceAudio, ...] = ()
    speaker_id: str = ""
    gender: str = ""


NO_REFERENCE_MESSAGE = "no reference recording of the same text"


def failure_score(error: Exception) -> Score:
    """The row an exception from a measure or an evaluator becomes: a :class:`NoScore` keeps
    its own status and reason, anything else is ``error`` with the exception's type and
    message. Every place that catches a scoring failure goes through here, so a failure reads
    the same whichever layer caught it."""
    if isinstance(error, NoScore):
        return Score(None, error.status, error.reason)
    return Score(None, ERROR, f"{type(error).__name__}: {error}")


def guarded(compute: Callable[[], float]) -> Score:
    """Run a measure's computation, which returns a bare number, and make it a :class:`Score`.

    For evaluator authors, inside ``score`` or ``_score_audio_list``: a raised exception
    becomes a row (:func:`failure_score`), and so does a ``None``, NaN or infinite result,
    because a number is only a score once it is known to be finite. Use :func:`contained`
    instead for a call that already returns a :class:`Score`.
    """
    try:
        value = compute()
    except Exception as exc:  # noqa: BLE001 - recorded as a status, never swallowed
        return failure_score(exc)
    if value is None or not math.isfinite(float(value)):
        return Score(None, ERROR, f"measure returned a non-finite value {value!r}")
    return Score(float(value))


def contained(call: Callable[..., Score], *args: Any) -> Score:
    """Call something that returns a :class:`Score` (an evaluator's ``evaluate`` or
    ``evaluate_speaker``) with ``args``, turning an exception into a row
    (:func:`failure_score`).

    For the scoring stage and the default ``evaluate_batch``: one utterance's (or speaker's)
    failure, from a built-in evaluator or a plugin, must never take down a shard. The score it
    returns is passed on unchecked; checking a bare number for finiteness is
    :func:`guarded`'s job, inside the evaluator.
    """
    try:
        return call(*args)
    except Exception as exc:  # noqa: BLE001 - recorded as a status, never swallowed
        return failure_score(exc)


def evaluate_all(evaluator: Evaluator, items: Sequence[Item]) -> list[Score]:
    """One score per item through the batch hook; a batch that raises gives every item the
    row of that failure (:func:`failure_score`)."""
    try:
        scores = evaluator.evaluate_batch(items)
    except Exception as exc:  # noqa: BLE001 - recorded as a status, never swallowed
        return [failure_score(exc)] * len(items)
    if len(scores) != len(items):
        return [Score(None, ERROR, f"{len(scores)} scores for {len(items)} items")] * len(items)
    return list(scores)


class Evaluator(ABC):
    """Common metadata; subclasses are registered by ``name`` in :mod:`.registry`.

    ``direction`` is +1 when higher values mean more intelligible speech, -1 when lower do.
    ``languages`` is ``None`` for language-independent measures.
    """

    name: ClassVar[str]
    direction: ClassVar[int] = 1
    unit: ClassVar[str] = ""
    languages: ClassVar[tuple[str, ...] | None] = None
    pathbench_compatible: ClassVar[bool] = False
    level: ClassVar[str] = "utterance"
    category: ClassVar[str]
    """A :attr:`.categories.Category.key`; the correlation stage refuses others."""
    trimmable: ClassVar[bool] = False
    """Whether the ``fa`` (forced-alignment-trimmed) variant makes sense for this measure, i.e.
    whether :meth:`trimmed` returns a wrapper. Only a measure that is scored through its kind's
    ``score_loaded`` can be: that is the method the wrapper calls."""
    context_options: ClassVar[tuple[str, ...]] = ()
    """Constructor options the workflow fills in itself (e.g. ``dataset_dir``)."""
    dataset_files: ClassVar[tuple[str, ...]] = ()
    """The files of its ``dataset_dir`` such a measure reads: its jobs declare them as inputs,
    so they are staged where jobs share no file system."""
    shared_tracks: ClassVar[tuple[str, ...]] = ()
    """Names of the shared analysis tracks (:mod:`pathbench_flow.tracks`) the measure reads; the
    workflow gives its jobs those tracks' files so the analyses run once per shard."""

    @classmethod
    def preflight(cls, options: dict[str, Any]) -> None:
        """Check, before any job runs, that ``options`` can work on this machine.

        Raises ``ValueError`` with a message for the user (a missing model, a missing
        language-model file); the default has nothing to check.
        """
        return None

    @classmethod
    def uses_gpu(cls, options: dict[str, Any]) -> bool:
        """Whether a job of this evaluator with ``options`` runs a neural model; signal
        measures do not. The one question the workflow asks: with the config's ``device`` it
        gives the rules' ``gpu`` resource, and a job that runs a model checks at its start
        that the device is there."""
        return False

    @classmethod
    def uses_tracks(cls, options: dict[str, Any]) -> tuple[str, ...]:
        """The shared tracks a job of this evaluator with ``options`` reads (default:
        :attr:`shared_tracks`)."""
        return cls.shared_tracks

    @classmethod
    def track_uses(cls, options: dict[str, Any]) -> tuple[tracks.TrackUse, ...]:
        """The tracks :meth:`uses_tracks` names, and for which utterances: what the workflow
        plans track files from. The default reads fixed tracks (:data:`tracks.TRACKS`) for
        every utterance; model measures read tracks of their models, for the languages they
        score.

        Raises:
            ValueError: a name that is no fixed track.
        """
        names = cls.uses_tracks(options)
        unknown = sorted(set(names) - set(tracks.TRACKS))
        if unknown:
            raise ValueError(
                f"evaluator {cls.name!r} declares unknown shared tracks {unknown}; "
                f"known: {sorted(tracks.TRACKS)} (pathbench_flow.tracks)"
            )
        return tuple(tracks.TrackUse(tracks.TRACKS[name]) for name in names)

    def supports(self, language: str) -> bool:
        return self.languages is None or language in self.languages

    def evaluate(self, item: Item) -> Score:
        """Score one utterance (utterance-level evaluators)."""
        raise TypeError(f"{self.name} scores speakers, not utterances")

    def evaluate_batch(self, items: Sequence[Item]) -> list[Score]:
        """Score many utterances; model-based evaluators override it to batch inference."""
        return [contained(self.evaluate, item) for item in items]

    def evaluate_speaker(self, items: Sequence[Item]) -> Score:
        """Score one speaker from all their utterances (speaker-level evaluators)."""
        raise TypeError(f"{self.name} scores utterances, not speakers")

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        """This evaluator reading forced-alignment-trimmed audio: how the scoring stage applies
        the ``fa`` variant. Each kind that can be trimmed returns its generic wrapper here;
        a measure never overrides it."""
        raise TypeError(f"{self.name} has no trimmed variant")

    def _language_gate(self, language: str) -> Score | None:
        if self.supports(language):
            return None
        return Score(None, UNSUPPORTED_LANGUAGE, f"{self.name} supports {self.languages}")


class LookupEvaluator(Evaluator):
    """Pre-computed values (spk2score, spk2age, …): ``score(utt_id)``."""

    category = LOOKUP.key

    @abstractmethod
    def score(self, utt_id: str) -> Score: ...

    def evaluate(self, item: Item) -> Score:
        return self.score(item.utt_id)


class ReferenceFreeEvaluator(Evaluator):
    """Audio-only measures: ``score(utt_id, audio_path, start, end)`` → ``_score_audio``.

    Trimmable by default: the ``fa`` variant (:class:`TrimmedEvaluator`) calls
    :meth:`score_loaded` with the trimmed audio.
    """

    category = SIGNAL.key
    trimmable = True

    @abstractmethod
    def _score_audio(self, audio: np.ndarray, fs: int) -> float: ...

    def score(self, utt_id: str, audio_path: str, start: float, end: float) -> Score:
        return self.score_loaded(load_shared(audio_path, start, end))

    def score_loaded(self, audio: np.ndarray) -> Score:
        """Score audio already in memory; the trimming wrapper enters here."""
        return guarded(lambda: self._score_audio(audio, SAMPLE_RATE))

    def evaluate(self, item: Item) -> Score:
        return self.score(item.utt_id, item.audio_path, item.start, item.end)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedEvaluator(self, trimmer, lambda audio, _item: self.score_loaded(audio))


class ReferenceTxtEvaluator(Evaluator):
    """Measures that need the transcription: ``score(…, transcription, language)``.

    A measure implements either ``score`` (it reads the file itself, as the recognisers do) or
    ``_score_audio_text(audio, transcription, language)``, a bare number from audio already in
    memory. Only the latter can be trimmable (``trimmable = True``): the ``fa`` variant
    (:class:`TrimmedEvaluator`) calls :meth:`score_loaded` with the trimmed audio, so the
    measure needs no wrapper of its own.
    """

    category = TEXT.key

    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        transcription: str,
        language: str,
    ) -> Score:
        return self.score_loaded(load_shared(audio_path, start, end), transcription, language)

    def score_loaded(self, audio: np.ndarray, transcription: str, language: str) -> Score:
        """Score audio already in memory; the trimming wrapper enters here."""
        return guarded(lambda: self._score_audio_text(audio, transcription, language))

    def _score_audio_text(self, audio: np.ndarray, transcription: str, language: str) -> float:
        raise NotImplementedError(f"{self.name} implements neither score nor _score_audio_text")

    def evaluate(self, item: Item) -> Score:
        return self._language_gate(item.language) or self.score(
            item.utt_id, item.audio_path, item.start, item.end, item.transcription, item.language
        )

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        def score(audio: np.ndarray, item: Item) -> Score:
            return self._language_gate(item.language) or self.score_loaded(
                audio, item.transcription, item.language
            )

        return TrimmedEvaluator(self, trimmer, score)


class ReferenceAudioEvaluator(Evaluator):
    """Comparison with reference recordings of the same text: ``score(…, reference_audios)``.

    A measure implements either ``score`` or ``_score_against(test, references, audio)``: the
    test audio against the references named by the keys ``references``, where ``audio(key)``
    loads one only when the measure needs it (features cached per job need none). Only the
    latter can be trimmable: the ``fa`` variant (:class:`TrimmedReferenceAudioEvaluator`) calls
    :meth:`score_loaded` with keys and loaders of the trimmed recordings, under the measure's
    :meth:`trim_rule`.
    """

    category = AUDIO.key

    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        reference_audios: Sequence[ReferenceAudio],
    ) -> Score:
        keys = tuple((reference, False) for reference in reference_audios)
        return self.score_loaded(
            lambda: load_shared(audio_path, start, end), keys, lambda key: load_shared(*key[0])
        )

    def score_loaded(
        self,
        test: Callable[[], np.ndarray],
        references: tuple[Hashable, ...],
        audio: Callable[[Hashable], np.ndarray],
    ) -> Score:
        """Score loaders of the test and the references; the trimming wrapper enters here.
        Keys tell raw from trimmed recordings, so one job's feature caches serve both."""

        def compute() -> float:
            if not references:
                raise NoScore(NO_REFERENCES, NO_REFERENCE_MESSAGE)
            return self._score_against(test(), references, audio)

        return guarded(compute)

    def _score_against(
        self,
        test: np.ndarray,
        references: tuple[Hashable, ...],
        audio: Callable[[Hashable], np.ndarray],
    ) -> float:
        raise NotImplementedError(f"{self.name} implements neither score nor _score_against")

    def evaluate(self, item: Item) -> Score:
        return self.score(item.utt_id, item.audio_path, item.start, item.end, item.reference_audios)

    def trim_rule(self, group: TrimGroup) -> Score:
        """How the ``fa`` variant treats recordings without a good trim: by default
        :func:`group_fallback`; a measure with another convention overrides it."""
        return group_fallback(group)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedReferenceAudioEvaluator(self, trimmer)


class ReferenceTxtAndAudioEvaluator(Evaluator):
    """References plus transcription (trimmed reference measures)."""

    category = AUDIO.key

    @abstractmethod
    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        transcription: str,
        language: str,
        reference_audios: Sequence[ReferenceAudio],
    ) -> Score: ...

    def evaluate(self, item: Item) -> Score:
        return self.score(
            item.utt_id,
            item.audio_path,
            item.start,
            item.end,
            item.transcription,
            item.language,
            item.reference_audios,
        )


class ReferenceFreeSpeakerEvaluator(Evaluator):
    """Speaker-level measures over all of a speaker's audio: ``_score_audio_list(audios)``.

    Trimmable by default: the ``fa`` variant (:class:`TrimmedSpeakerEvaluator`) calls
    :meth:`score_loaded` with the trimmed audios and the items.
    """

    category = SPEAKER.key
    level = "speaker"
    trimmable = True

    @abstractmethod
    def _score_audio_list(self, audios: list[np.ndarray]) -> float: ...

    def score_loaded(self, audios: list[np.ndarray], items: Sequence[Item]) -> Score:
        """Score audios already in memory; the trimming wrapper enters here."""
        return guarded(lambda: self._score_audio_list(audios))

    def evaluate_speaker(self, items: Sequence[Item]) -> Score:
        audios = [load_shared(i.audio_path, i.start, i.end) for i in items]
        return self.score_loaded(audios, items)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedSpeakerEvaluator(self, trimmer)


class LanguageAwareSpeakerEvaluator(ReferenceFreeSpeakerEvaluator):
    """Speaker-level measures that also need the language: ``_score_audio_list(audios, lang)``.

    Speaker gender travels with the items for measures (such as vowel space area) that use
    it; ``_speaker_gender`` exposes it.
    """

    @abstractmethod
    def _score_audio_list(self, audios: list[np.ndarray], language: str) -> float: ...

    def score_loaded(self, audios: list[np.ndarray], items: Sequence[Item]) -> Score:
        language = items[0].language if items else ""
        gate = self._language_gate(language)
        if gate is not None:
            return gate
        self._speaker_gender = items[0].gender if items else ""
        return guarded(lambda: self._score_audio_list(audios, language))


# ------------------------------------------------------------------------- trimming wrappers
class TrimOutcome(Protocol):
    """What a trimmer returns: the (possibly untrimmed) audio and a record with a status."""

    audio: np.ndarray | None

    @property
    def record(self) -> Any: ...


class Trimmer(Protocol):
    """Finds speech in an utterance (:class:`pathbench_flow.trimming.forced_alignment.FATrimmer`, or
    stored boundaries)."""

    def trim(
        self,
        audio_path: str,
        transcription: str,
        language: str,
        start_time: float,
        end_time: float,
    ) -> TrimOutcome: ...


def trimmed_audio(trimmer: Trimmer, item: Item) -> tuple[np.ndarray, bool]:
    """The item's audio through ``trimmer`` and whether a real trim happened.

    A failed or skipped trim (an explicit segment is kept whole) falls back to the plain load,
    as the architecture requires; the trimmer's record of it (the ``fa_trim`` table's status)
    is what says so.
    """
    outcome = trimmer.trim(item.audio_path, item.transcription, item.language, item.start, item.end)
    if outcome.audio is None:
        return load_shared(item.audio_path, item.start, item.end), False
    return outcome.audio, outcome.record.status in GOOD_TRIMS


class TrimmedVariant(Evaluator):
    """The contract every trimming wrapper keeps; the scoring stage builds one per ``fa`` job
    through ``inner.trimmed(trimmer)``, never a measure.

    A wrapper is the inner evaluator's stand-in in the scoring stage, so it copies what the
    stage and its rows read of an evaluator instance: ``name`` (the metric's ``fa`` name is
    derived from it), ``direction``, ``unit``, ``languages``, ``category`` and ``level``.
    Options stay with the inner evaluator, which was built with them and is shared with the
    job's ``raw`` variant (its caches too). The wrapper only decides which audio the inner
    evaluator's ``score_loaded`` receives; what the measure computes and how it gates
    languages stay the inner evaluator's.
    """

    COPIED: ClassVar[tuple[str, ...]] = (
        "name",
        "direction",
        "unit",
        "languages",
        "category",
        "level",
    )

    def __init__(self, inner: Evaluator, trimmer: Trimmer) -> None:
        if not inner.trimmable:
            raise TypeError(f"{inner.name} has no trimmed variant")
        self.inner, self.trimmer = inner, trimmer
        for attribute in self.COPIED:
            setattr(self, attribute, getattr(inner, attribute))


class TrimmedEvaluator(TrimmedVariant):
    """The ``fa`` variant of an utterance measure scored from one recording (reference-free
    and reference-text kinds): ``score(audio, item)`` is the inner evaluator's
    ``score_loaded`` given the item's other fields, as its kind's ``trimmed`` passes it."""

    def __init__(
        self, inner: Evaluator, trimmer: Trimmer, score: Callable[[np.ndarray, Item], Score]
    ) -> None:
        super().__init__(inner, trimmer)
        self._score = score

    def evaluate(self, item: Item) -> Score:
        return self._score(trimmed_audio(self.trimmer, item)[0], item)


class TrimmedSpeakerEvaluator(TrimmedVariant):
    """The ``fa`` variant of speaker-level measures, language-aware ones included: the
    language (and gender) reach the inner evaluator through its own ``score_loaded``, which
    reads them from the items."""

    def evaluate_speaker(self, items: Sequence[Item]) -> Score:
        audios = [trimmed_audio(self.trimmer, item)[0] for item in items]
        return self.inner.score_loaded(audios, items)


@dataclass(frozen=True)
class TrimGroup:
    """A test utterance and its references as a reference-audio measure's ``trim_rule`` sees
    them: each recording's trim status, its audio trimmed or plain, and the measure's
    ``score_loaded``."""

    test: Item
    references: tuple[Item, ...]
    status: Callable[[Item], str]
    """The trimmer's status (:mod:`~pathbench_flow.common.status`) of a recording, asked once per
    job."""
    audio: Callable[[Item, bool], np.ndarray]
    """A recording's audio, trimmed (``True``; a failed trim falls back to the plain load) or
    plain."""
    score: Callable[..., Score]
    """The inner evaluator's :meth:`ReferenceAudioEvaluator.score_loaded`."""

    def good(self, item: Item) -> bool:
        """Whether ``item`` has a real trim (:data:`GOOD_TRIMS`)."""
        return self.status(item) in GOOD_TRIMS


def noted(score: Score, note: str) -> Score:
    """``score`` with ``note`` after its message: what a trimmed variant did to the references
    must show in the row whether or not the measure succeeded."""
    return Score(score.value, score.status, "; ".join(m for m in (score.message, note) if m))


def group_fallback(group: TrimGroup) -> Score:
    """The default ``trim_rule`` (NAD's): trimmed audio, or untrimmed for the whole group.

    A comparison by alignment (DTW) weighs durations implicitly, so trimming the test but not a
    reference (or the reverse) would bias it. If the test or any reference lacks a good trim,
    every member is scored untrimmed (under the raw variant's keys, so their cached features
    are reused), and the message says so.
    """
    members = (group.test, *group.references)
    verdicts = [group.good(member) for member in members]
    grouped = all(verdicts)
    keys = tuple(((m.audio_path, m.start, m.end), grouped) for m in group.references)
    by_key = dict(zip(keys, group.references, strict=True))
    result = group.score(
        lambda: group.audio(group.test, grouped),
        keys,
        lambda key: group.audio(by_key[key], grouped),
    )
    if grouped:
        return result
    failed = [m.utt_id for m, good in zip(members, verdicts, strict=True) if not good]
    note = f"group fallback to untrimmed audio (no good trim for {', '.join(failed)})"
    return noted(result, note)


class _TrimStatuses:
    """Each recording's trim status, asked of the trimmer once per job.

    A reference recurs for every test utterance of its text, and with ``all`` references for
    every test of every speaker. Asking the trimmer per test decoded each reference per test
    (tests x references decodes per job), although a recording whose features are cached needs
    no audio: only its status decides how a group is compared. The key is everything the
    trimmer is given, so a status is reused only for the same question.
    """

    def __init__(self, trimmer: Trimmer) -> None:
        self._trimmer = trimmer
        self._known: dict[tuple, str] = {}

    def __call__(self, item: Item) -> str:
        key = (item.audio_path, item.start, item.end, item.transcription, item.language)
        if key not in self._known:
            outcome = self._trimmer.trim(
                item.audio_path, item.transcription, item.language, item.start, item.end
            )
            self._known[key] = outcome.record.status
        return self._known[key]


class TrimmedReferenceAudioEvaluator(TrimmedVariant):
    """The ``fa`` variant of reference-audio measures: the test and its references trimmed.

    The references are items of the test's text and language, so the trimmer sees them like
    any utterance; whether a recording without a good trim is dropped, or makes the group
    untrimmed, is the inner evaluator's ``trim_rule`` (:func:`group_fallback` by default).
    """

    def __init__(self, inner: ReferenceAudioEvaluator, trimmer: Trimmer) -> None:
        super().__init__(inner, trimmer)
        self._statuses = _TrimStatuses(trimmer)

    def _audio(self, item: Item, trimmed: bool) -> np.ndarray:
        if trimmed:
            return trimmed_audio(self.trimmer, item)[0]
        return load_shared(item.audio_path, item.start, item.end)

    def evaluate(self, item: Item) -> Score:
        references = tuple(
            Item(Path(path).stem, path, start, end, item.transcription, item.language)
            for path, start, end in item.reference_audios
        )
        group = TrimGroup(item, references, self._statuses, self._audio, self.inner.score_loaded)
        return self.inner.trim_rule(group)


def items_from_manifest(frame: pd.DataFrame) -> list[Item]:
    """Manifest rows → evaluator input items, in utt_id order."""
    return [
        Item(
            utt_id=row.utt_id,
            audio_path=row.audio_path,
            start=float(row.start),
            end=float(row.end),
            transcription=row.text,
            language=row.language,
            speaker_id=row.speaker_id,
            gender=row.gender,
        )
        for row in frame.itertuples(index=False)
    ]


def variant_audio(item: Item, trimmer: Trimmer | None) -> np.ndarray:
    """The audio a consumer analyses for ``item``: trimmed when a trimmer is given."""
    if trimmer is None:
        return load_shared(item.audio_path, item.start, item.end)
    return trimmed_audio(trimmer, item)[0]
