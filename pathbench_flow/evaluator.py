"""The evaluator hierarchy: the base class an evaluator inherits decides what it receives.

PathBench organises measures by the information they need: audio only, audio plus the
transcription, audio plus reference recordings of the same text, or all of a speaker's audio.
Each abstract class below turns one :class:`Item` (everything the workflow knows about an
utterance) into exactly the arguments its ``score`` method takes; that conversion, in each
class's ``evaluate``, is the only dispatch on evaluator kinds in the code base.

Trimming is a decorator, and the scoring stage is what applies it: for the ``fa`` variant it
calls ``evaluator.trimmed(trimmer)``, which returns a wrapper
(:class:`TrimmedReferenceFreeEvaluator`, :class:`TrimmedReferenceFreeSpeakerEvaluator`, or an
evaluator's own where the measure needs more than the trimmed test audio) that cuts the audio
with the trimmer and hands it to the inner evaluator. Evaluators never know whether their
input was trimmed, and no variant is registered as an evaluator of its own.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.audio import load_shared
from pathbench_flow.categories import AUDIO, LOOKUP, SIGNAL, SPEAKER, TEXT
from pathbench_flow.data.references import ReferenceAudio
from pathbench_flow.status import ERROR, GOOD_TRIMS, OK, UNSUPPORTED_LANGUAGE, NoScore


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
    """Common metadata; subclasses are registered by ``name`` in :mod:`pathbench_flow.registry`.

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
    """A :attr:`pathbench_flow.categories.Category.key`; the correlation stage refuses others."""
    trimmable: ClassVar[bool] = False
    """Whether the ``fa`` (forced-alignment-trimmed) variant makes sense for this measure, i.e.
    whether :meth:`trimmed` returns a wrapper."""
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
        the ``fa`` variant. Trimmable evaluators (``trimmable = True``) override it."""
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
    """Audio-only measures: ``score(utt_id, audio_path, start, end)`` → ``_score_audio``."""

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
        return TrimmedReferenceFreeEvaluator(self, trimmer)


class ReferenceTxtEvaluator(Evaluator):
    """Measures that need the transcription: ``score(…, transcription, language)``."""

    category = TEXT.key

    @abstractmethod
    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        transcription: str,
        language: str,
    ) -> Score: ...

    def evaluate(self, item: Item) -> Score:
        return self._language_gate(item.language) or self.score(
            item.utt_id, item.audio_path, item.start, item.end, item.transcription, item.language
        )


class ReferenceAudioEvaluator(Evaluator):
    """Comparison with reference recordings of the same text: ``score(…, reference_audios)``."""

    category = AUDIO.key

    @abstractmethod
    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        reference_audios: Sequence[ReferenceAudio],
    ) -> Score: ...

    def evaluate(self, item: Item) -> Score:
        return self.score(item.utt_id, item.audio_path, item.start, item.end, item.reference_audios)


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
    """Speaker-level measures over all of a speaker's audio: ``_score_audio_list(audios)``."""

    category = SPEAKER.key
    level = "speaker"
    trimmable = True

    @abstractmethod
    def _score_audio_list(self, audios: list[np.ndarray]) -> float: ...

    def score_loaded(self, audios: list[np.ndarray], items: Sequence[Item]) -> Score:
        return guarded(lambda: self._score_audio_list(audios))

    def evaluate_speaker(self, items: Sequence[Item]) -> Score:
        audios = [load_shared(i.audio_path, i.start, i.end) for i in items]
        return self.score_loaded(audios, items)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedReferenceFreeSpeakerEvaluator(self, trimmer)


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
    """Finds speech in an utterance (:class:`pathbench_flow.trimming.vad.FATrimmer`, or
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

    A failed or skipped trim falls back to the plain load, as the architecture requires.
    """
    outcome = trimmer.trim(item.audio_path, item.transcription, item.language, item.start, item.end)
    if outcome.audio is None:
        return load_shared(item.audio_path, item.start, item.end), False
    return outcome.audio, outcome.record.status in GOOD_TRIMS


class TrimmedReferenceFreeEvaluator(ReferenceTxtEvaluator):
    """Wraps any reference-free evaluator; takes the text only to find the speech.

    The inner evaluator never sees the transcription, only the (trimmed) audio.
    """

    languages = None
    category = SIGNAL.key

    def __init__(self, inner: ReferenceFreeEvaluator, trimmer: Trimmer) -> None:
        self.inner, self.trimmer = inner, trimmer
        self.name, self.direction = inner.name, inner.direction

    def score(
        self,
        utt_id: str,
        audio_path: str,
        start: float,
        end: float,
        transcription: str,
        language: str,
    ) -> Score:
        item = Item(utt_id, audio_path, start, end, transcription, language)
        return self.inner.score_loaded(trimmed_audio(self.trimmer, item)[0])


class TrimmedReferenceFreeSpeakerEvaluator(Evaluator):
    """The trimming decorator for speaker-level evaluators, language-aware ones included: the
    language (and gender) reach the inner evaluator through its own ``score_loaded``, which
    reads them from the items."""

    level = "speaker"
    category = SPEAKER.key

    def __init__(self, inner: ReferenceFreeSpeakerEvaluator, trimmer: Trimmer) -> None:
        self.inner, self.trimmer = inner, trimmer
        self.name, self.direction = inner.name, inner.direction

    def evaluate_speaker(self, items: Sequence[Item]) -> Score:
        audios = [trimmed_audio(self.trimmer, item)[0] for item in items]
        return self.inner.score_loaded(audios, items)
