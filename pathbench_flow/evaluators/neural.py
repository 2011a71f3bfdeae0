"""PathBench's model-based measures, named as PathBench's result keys.

| name | measure | model(s) |
|---|---|---|
| ``artp`` | ArtP: forced alignment of the phonemised transcription | phone model |
| ``artp_old`` | Confidence: mean posterior of the greedy phone runs | phone model |
| ``artp_double_asr`` | DArtP: ArtP of the LM-decoded ASR transcription | ASR + LM + phone model |
| ``per`` | phone error rate of the phonemised ASR transcription | ASR model |
| ``dper`` | phone error rate of the phone model's own output | phone model |
| ``double_asr`` | phone error rate between greedy and LM decoding | ASR + LM |

Options (``evaluator_options.<name>``): ``model`` (the phone model), ``models`` (language →
ASR model; languages left out are ``unsupported_language``), ``lm`` (language → n-gram file,
or one file for all), ``batch_size`` (utterances per forward pass on a GPU). Models are loaded
by :mod:`pathbench_flow.neural.models`, which also does the up-front checks (``preflight``).
Each model's outputs are a shared track (:mod:`pathbench_flow.neural.model_tracks`): the
workflow runs every model once per utterance, and the measures reading it share its outputs.

The reference-free measures that need the utterance's language (DArtP, Double ASR) take the
text-aware interface only to learn the language: they never read the transcription.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, ClassVar

import numpy as np

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.languages import LANGUAGES
from pathbench_flow.common.status import ERROR, TOO_SHORT, UNSUPPORTED_LANGUAGE, NoScore
from pathbench_flow.evaluators.base import (
    Item,
    ReferenceFreeEvaluator,
    ReferenceTxtEvaluator,
    Score,
    failure_score,
    guarded,
)
from pathbench_flow.evaluators.categories import MODEL, TEXT
from pathbench_flow.evaluators.options import MODEL_NAME, ByLanguage, Integer, Text, checked
from pathbench_flow.evaluators.signal import PATHBENCH, Compat
from pathbench_flow.neural import ctc, model_tracks, phonemes
from pathbench_flow.neural import lm as ngram
from pathbench_flow.neural import models as loading

EMPTY_PHONEMISATION = "empty_phonemisation"
"""Status when a text yields no phone the model knows (nothing to align or compare)."""
LOAD_CHUNK = 64
"""Utterances whose audio is held in memory at once; the model batches within a chunk."""
BATCH_SIZE = 8
"""Utterances a model runs at once on a GPU (option ``batch_size``; the CPU runs one)."""
LM_FILES = ByLanguage(Text("an n-gram file (ARPA or kenlm binary)"), one_for_all=True)
"""What the ``lm`` option accepts: one file for every language, or language → file."""
ASR_DEFAULT: Mapping[str, str] = loading.ASR_MODELS


def _chunks(indices: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(indices), size):
        yield indices[start : start + size]


def _languages_by_model(directories: Mapping[str, str]) -> dict[str, list[str]]:
    """Language → model directory turned around: each model with the languages it serves."""
    served: dict[str, list[str]] = {}
    for language, directory in sorted(directories.items()):
        served.setdefault(directory, []).append(language)
    return served


class _ModelEvaluator:
    """Shared plumbing: option checks, audio loading, batching and per-item containment.

    Subclasses set ``uses`` (which of ``model``/``models``/``lm``/``espeak`` they need) and
    implement ``_score_chunk(items, audios)``, returning one Score per item.
    """

    uses: ClassVar[frozenset[str]] = frozenset()
    reads_asr_outputs: ClassVar[bool] = True
    """Whether the measure reads the ASR models' log-posteriors itself, not only through their
    n-gram transcription (:func:`~pathbench_flow.neural.model_tracks.lm_track`)."""
    category = TEXT.key
    trimmable = False

    @checked
    def __init__(
        self,
        model: Annotated[str, MODEL_NAME] = loading.PHONE_MODEL,
        models: Annotated[Mapping[str, str] | None, ByLanguage(MODEL_NAME)] = None,
        lm: Annotated[str | Mapping[str, str] | None, LM_FILES] = None,
        batch_size: Annotated[int, Integer(1)] = BATCH_SIZE,
        compat: Compat = PATHBENCH,
    ) -> None:
        self._check(model, models, lm)
        self.compat = compat
        self._transcripts = _Transcripts(self.compat)
        self.batch_size = int(batch_size)
        self._lms = ngram.lm_paths(lm)
        self._phone_dir, self._asr_dirs = self._directories(model, models)
        if "model" in self.uses:
            self._phone_track = model_tracks.ctc_track(self._phone_dir)
        if "models" in self.uses:
            self.languages = tuple(sorted(self._asr_dirs))
            self._asr_tracks = {
                language: model_tracks.ctc_track(directory)
                for language, directory in self._asr_dirs.items()
            }
        if "lm" in self.uses:
            self._lm_tracks = {
                language: model_tracks.lm_track(directory, path)
                for language, directory in self._asr_dirs.items()
                if (path := ngram.lm_for(self._lms, language))
            }

    # --------------------------------------------------------------------- checking options
    @classmethod
    def _option(cls, key: str) -> str:
        return f"evaluator_options.{cls.name}.{key}"

    @classmethod
    def _check(cls, model: str, asr: Mapping[str, str] | None, lm: Any) -> None:
        """Every resource the options name, on this machine (raises ModelUnavailable); the
        models first, whose message names the option and the extra that brings the rest."""
        if "model" in cls.uses:
            loading.check(model, cls._option("model"))
        if "models" in cls.uses:
            for language, asr_model in (ASR_DEFAULT if asr is None else asr).items():
                loading.check(asr_model, cls._option(f"models.{language}"))
        if "lm" in cls.uses:
            for language, path in ngram.lm_paths(lm).items():
                ngram.check_lm(path, cls._option("lm" if language == "*" else f"lm.{language}"))
        if "espeak" in cls.uses:
            try:
                phonemes.check_installed()
            except phonemes.PhonemiserMissing as error:
                raise loading.ModelUnavailable(f"{cls.name}: {error}") from None

    @classmethod
    def _directories(
        cls, model: str, models: Mapping[str, str] | None
    ) -> tuple[str, dict[str, str]]:
        """The phone model's directory ("" if unused) and each language's ASR model's."""
        phone = str(loading.resolve(model, cls._option("model"))) if "model" in cls.uses else ""
        if "models" not in cls.uses:
            return phone, {}
        return phone, {
            language: str(loading.resolve(name, cls._option(f"models.{language}")))
            for language, name in (ASR_DEFAULT if models is None else models).items()
        }

    @classmethod
    def track_uses(cls, options: dict[str, Any]) -> tuple[tracks.TrackUse, ...]:
        """The model outputs the measure reads, as tracks keyed by model
        (:mod:`pathbench_flow.neural.model_tracks`), so measures naming the same model share
        one track: the phone model's for the languages the measure scores, each ASR model's
        for the languages mapped to it; a measure that needs an n-gram LM reads them only for
        the languages that have one (the others are ``no_language_model`` unread)."""
        phone_dir, asr_dirs = cls._directories(
            options.get("model", loading.PHONE_MODEL), options.get("models")
        )
        scored = set(asr_dirs) if "models" in cls.uses else cls.languages
        lms = ngram.lm_paths(options.get("lm"))
        if "lm" in cls.uses:
            scored = {language for language in asr_dirs if ngram.lm_for(lms, language)}
        languages = None if scored is None else tuple(sorted(scored))
        readers = [(phone_dir, languages)] if "model" in cls.uses else []
        readers += [
            (directory, tuple(sorted(set(mapped).intersection(languages or ()))))
            for directory, mapped in _languages_by_model(asr_dirs).items()
        ]
        batch_size = int(options.get("batch_size", BATCH_SIZE))
        uses = [
            tracks.TrackUse(
                model_tracks.ctc_track(directory),
                read,
                batch_size,
                read=directory == phone_dir or cls.reads_asr_outputs,
            )
            for directory, read in readers
            if read is None or read
        ]
        if "lm" in cls.uses:
            by_model_and_lm: dict[tuple[str, str], list[str]] = {}
            for language in languages or ():
                key = (asr_dirs[language], str(ngram.lm_for(lms, language)))
                by_model_and_lm.setdefault(key, []).append(language)
            uses += [
                tracks.TrackUse(model_tracks.lm_track(*key), tuple(mapped), batch_size)
                for key, mapped in sorted(by_model_and_lm.items())
            ]
        return tuple(tracks.merge_uses(uses).values())

    @classmethod
    def uses_tracks(cls, options: dict[str, Any]) -> tuple[str, ...]:
        return tuple(use.track.name for use in cls.track_uses(options) if use.read)

    @classmethod
    def uses_gpu(cls, options: dict[str, Any]) -> bool:
        return True

    @classmethod
    def preflight(cls, options: dict[str, Any]) -> None:
        """Models, LM files, packages and espeak-ng, checked before any job runs."""
        cls._check(
            options.get("model", loading.PHONE_MODEL),
            options.get("models"),
            options.get("lm"),
        )

    # --------------------------------------------------------------------------- scoring
    def _phone_model(self) -> loading.CTCModel:
        return loading.load_ctc(self._phone_dir)

    def _asr_model(self, language: str) -> loading.CTCModel:
        return loading.load_ctc(self._asr_dirs[language])

    def evaluate_batch(self, items: Sequence[Item]) -> list[Score]:
        """Gate each item (language, length), then score the rest chunk by chunk."""
        scores: list[Score | None] = [self._gate(item) for item in items]
        pending = [i for i, score in enumerate(scores) if score is None]
        for chunk in _chunks(pending, LOAD_CHUNK):
            audios = [load_shared(items[i].audio_path, items[i].start, items[i].end) for i in chunk]
            short = [len(a) < loading.MIN_SAMPLES for a in audios]
            for i, is_short, audio in zip(chunk, short, audios, strict=True):
                if is_short:
                    scores[i] = Score(
                        None, TOO_SHORT, f"{len(audio)} samples; at least {loading.MIN_SAMPLES}"
                    )
            kept = [(i, a) for i, a, s in zip(chunk, audios, short, strict=True) if not s]
            if kept:
                results = self._score_chunk([items[i] for i, _a in kept], [a for _i, a in kept])
                for (i, _a), score in zip(kept, results, strict=True):
                    scores[i] = score
        return [s if s is not None else Score(None, ERROR, "not scored") for s in scores]

    def _gate(self, item: Item) -> Score | None:
        if self.languages is not None and item.language not in self.languages:
            return Score(
                None, UNSUPPORTED_LANGUAGE, f"{self.name} has no model for {item.language!r}"
            )
        return None

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        raise NotImplementedError

    def _outputs(self, track: tracks.Track, audios: Sequence[np.ndarray]) -> list[np.ndarray]:
        """A model's outputs for ``audios`` (read-only): from the job's track files, or run
        now (the misses batched) and remembered for every other measure of the process."""
        found = tracks.values(track, audios, SAMPLE_RATE, self.batch_size)
        return [tracks.as_matrix(arrays) for arrays in found]

    def _by_language(self, items: list[Item], audios: list[np.ndarray]) -> dict[int, np.ndarray]:
        """ASR log-posteriors per item index, each language through its own model."""
        out: dict[int, np.ndarray] = {}
        for language in sorted({item.language for item in items}):
            picked = [i for i, item in enumerate(items) if item.language == language]
            outputs = self._outputs(self._asr_tracks[language], [audios[i] for i in picked])
            out.update(zip(picked, outputs, strict=True))
        return out

    def _lm_texts(self, items: list[Item], audios: list[np.ndarray]) -> list[str | Exception]:
        """Each item's n-gram transcription (its language has an LM), or the error that
        decoding it raised: from the job's track files, or decoded now and remembered."""
        out: list[str | Exception] = [ValueError("not decoded")] * len(items)
        for language in sorted({item.language for item in items}):
            picked = [i for i, item in enumerate(items) if item.language == language]
            found = tracks.outcomes(
                self._lm_tracks[language], [audios[i] for i in picked], SAMPLE_RATE, self.batch_size
            )
            for i, outcome in zip(picked, found, strict=True):
                out[i] = (
                    outcome if isinstance(outcome, Exception) else model_tracks.arrays_text(outcome)
                )
        return out


class _Transcripts:
    """How a measure turns model outputs and texts into the token sequences it compares.

    ``compat: pathbench`` (the default) does what PathBench e26aa32 does, so the values are
    PathBench's: greedy output decoded by the model's tokenizer (``<s>``, ``</s>`` and
    ``<unk>`` kept; cleaning later turns ``<unk>`` into ``unk``), espeak-ng's language-switch
    flags kept as tokens, and a reference that phonemises to nothing scored as jiwer 4
    scores it (every hypothesis phone an insertion over a length of one; 0.0 when both are
    empty). ``compat: none`` is this project's reading: special tokens are not speech and are
    dropped, flags are not phones and are removed, and a reference without phones has no
    error rate (status ``empty_phonemisation``).
    """

    def __init__(self, compat: str) -> None:
        self.pathbench = compat == PATHBENCH

    def text(self, model: loading.CTCModel, log_posteriors: np.ndarray) -> str:
        """A character model's greedy transcription (``|`` is the word delimiter)."""
        if self.pathbench:
            return model.greedy_text(log_posteriors)
        labels = model.labels
        tokens = ctc.greedy_tokens(log_posteriors, model.blank)
        # transformers 5 lists the word delimiter among the special tokens; it is speech's
        # word boundary here, so it stays (as a space) while the other specials go.
        kept = "".join(
            labels[t] for t in tokens if labels[t] == "|" or labels[t] not in model.specials
        )
        return kept.replace("|", " ")

    def phones_heard(self, model: loading.CTCModel, log_posteriors: np.ndarray) -> list[str]:
        """A phone model's greedy output as phones (word delimiters dropped)."""
        if self.pathbench:
            return model.greedy_text(log_posteriors).replace("|", " ").split()
        labels = model.labels
        tokens = ctc.greedy_tokens(log_posteriors, model.blank)
        return [labels[t] for t in tokens if labels[t] not in model.specials and labels[t] != "|"]

    def phones(self, text: str, language: str) -> tuple[str, ...]:
        """``text`` cleaned and phonemised in ``language``."""
        return phonemes.phonemise(text, language, keep_flags=self.pathbench)

    def alignable(self, model: loading.CTCModel, text: str, language: str) -> list[str]:
        """The phones of ``text`` that the phone model can align (ArtP and DArtP)."""
        return phonemes.for_vocabulary(self.phones(text, language), model.vocab)

    def error_rate(self, reference: Sequence[str], hypothesis: Sequence[str], text: str) -> float:
        """Phone error rate; ``text`` (the reference's source) names an empty reference."""
        if reference:
            return ctc.error_rate(reference, hypothesis)
        if self.pathbench:
            return float(len(hypothesis))
        raise NoScore(EMPTY_PHONEMISATION, f"no phones in the reference {text!r}")


def _artp(model: loading.CTCModel, log_posteriors: np.ndarray, phones: Sequence[str]) -> float:
    """ArtP of ``phones`` (already in the model's vocabulary) on one utterance."""
    try:
        ids = [model.vocab[p] for p in phones]
        return ctc.articulatory_precision(log_posteriors, ids, model.blank)
    except ValueError as error:
        raise NoScore(TOO_SHORT, str(error)) from None


def _reference_phones(
    model: loading.CTCModel, transcripts: _Transcripts, text: str, language: str
) -> list[str]:
    phones = transcripts.alignable(model, text, language)
    if not phones:
        raise NoScore(EMPTY_PHONEMISATION, f"no phone of the model's vocabulary in {text!r}")
    return phones


class _TextModelEvaluator(_ModelEvaluator, ReferenceTxtEvaluator):
    """A reference-text model measure: a single utterance is a batch of one, so one code path
    (``_score_chunk``) serves the workflow's batches and direct calls alike."""

    def score(self, utt_id, audio_path, start, end, transcription, language) -> Score:
        item = Item(utt_id, audio_path, start, end, transcription, language)
        return self.evaluate_batch([item])[0]


class _PhoneTextEvaluator(_TextModelEvaluator):
    """A measure of the phone model's output against the phonemised transcription: the chunk
    goes through the phone model once, then ``_one(model, item, log_posteriors)`` scores each
    utterance."""

    languages = LANGUAGES
    pathbench_compatible = True
    uses = frozenset({"model", "espeak"})

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        model = self._phone_model()
        outputs = self._outputs(self._phone_track, audios)
        return [self._one(model, it, lp) for it, lp in zip(items, outputs, strict=True)]

    def _one(self, model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        raise NotImplementedError


class ArtPEvaluator(_PhoneTextEvaluator):
    """``artp``: articulatory precision against the phonemised transcription (PathBench)."""

    name = "artp"
    unit = "posterior"

    def _one(self, model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        return guarded(
            lambda: _artp(
                model,
                log_posteriors,
                _reference_phones(model, self._transcripts, item.transcription, item.language),
            )
        )


class ConfidenceEvaluator(_ModelEvaluator, ReferenceFreeEvaluator):
    """``artp_old``: PathBench's phonetic confidence, from audio alone."""

    name = "artp_old"
    unit = "posterior"
    category = MODEL.key
    pathbench_compatible = True
    uses = frozenset({"model"})

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        if fs != SAMPLE_RATE:
            raise ValueError(f"wav2vec2 expects {SAMPLE_RATE} Hz audio")
        if len(audio) < loading.MIN_SAMPLES:
            raise NoScore(TOO_SHORT, f"{len(audio)} samples; at least {loading.MIN_SAMPLES}")
        model = self._phone_model()
        return ctc.confidence(np.exp(self._outputs(self._phone_track, [audio])[0]), model.blank)

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        model = self._phone_model()
        outputs = self._outputs(self._phone_track, audios)
        return [guarded(lambda lp=lp: ctc.confidence(np.exp(lp), model.blank)) for lp in outputs]


class DArtPEvaluator(_TextModelEvaluator):
    """``artp_double_asr``: DArtP, ArtP of what the ASR model and n-gram LM heard.

    As in PathBench, a decoded text without any phone of the phone model's vocabulary is
    aligned as the single phone ``a`` (the message says so): the model heard no words, which
    must count against the speaker rather than drop the utterance.
    """

    name = "artp_double_asr"
    unit = "posterior"
    category = MODEL.key
    pathbench_compatible = True
    uses = frozenset({"model", "models", "lm", "espeak"})
    FALLBACK = ("a",)

    reads_asr_outputs = False

    def _one(self, item: Item, decoded: str | Exception, phone_lp: np.ndarray) -> Score:
        model = self._phone_model()
        note: list[str] = []

        def compute() -> float:
            text = _text(decoded)
            phones = self._transcripts.alignable(model, text, item.language)
            if not phones:
                phones = [p for p in self.FALLBACK if p in model.vocab]
                note.append(f"no phone in the LM transcription {text!r}; aligned 'a'")
            return _artp(model, phone_lp, phones)

        result = guarded(compute)
        return Score(result.value, result.status, result.message or "; ".join(note))

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        with_lm = [i for i, it in enumerate(items) if ngram.lm_for(self._lms, it.language)]
        scores = [
            Score(None, ngram.NO_LANGUAGE_MODEL, f"no n-gram model: set {self._option('lm')}")
        ] * len(items)
        if not with_lm:
            return scores
        texts = self._lm_texts([items[i] for i in with_lm], [audios[i] for i in with_lm])
        phone = self._outputs(self._phone_track, [audios[i] for i in with_lm])
        for k, i in enumerate(with_lm):
            scores[i] = self._one(items[i], texts[k], phone[k])
        return scores


def _text(decoded: str | Exception) -> str:
    """An n-gram transcription, or the error decoding it raised, raised again."""
    if isinstance(decoded, Exception):
        raise decoded
    return decoded


class PEREvaluator(_TextModelEvaluator):
    """``per``: phone error rate of the language ASR model's transcription, both texts
    phonemised with espeak-ng in the utterance's language (PathBench's PER)."""

    name = "per"
    direction = -1
    unit = "ratio"
    pathbench_compatible = True
    uses = frozenset({"models", "espeak"})

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        outputs = self._by_language(items, audios)
        return [self._one(item, outputs[i]) for i, item in enumerate(items)]

    def _one(self, item: Item, log_posteriors: np.ndarray) -> Score:
        model = self._asr_model(item.language)
        hypothesis = self._transcripts.text(model, log_posteriors)
        return _rate(self._transcripts, item.transcription, hypothesis, item.language)


def _rate(transcripts: _Transcripts, reference: str, hypothesis: str, language: str) -> Score:
    """Phone error rate of two texts phonemised in ``language``; the hypothesis is the message."""

    def compute() -> float:
        return transcripts.error_rate(
            transcripts.phones(reference, language),
            transcripts.phones(hypothesis, language),
            reference,
        )

    result = guarded(compute)
    return Score(result.value, result.status, result.message or hypothesis)


class DPEREvaluator(_PhoneTextEvaluator):
    """``dper``: phone error rate of the phone model's output against the phonemised text."""

    name = "dper"
    direction = -1
    unit = "ratio"

    def _one(self, model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        hypothesis = self._transcripts.phones_heard(model, log_posteriors)

        def compute() -> float:
            reference = self._transcripts.phones(item.transcription, item.language)
            return self._transcripts.error_rate(reference, hypothesis, item.transcription)

        result = guarded(compute)
        return Score(result.value, result.status, result.message or " ".join(hypothesis))


class DoubleASREvaluator(_TextModelEvaluator):
    """``double_asr``: phone error rate between the ASR model's greedy and LM transcriptions
    (the greedy one as reference, as PathBench); reference-free, reads only the language."""

    name = "double_asr"
    direction = -1
    unit = "ratio"
    category = MODEL.key
    pathbench_compatible = True
    uses = frozenset({"models", "lm", "espeak"})

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        with_lm = [i for i, it in enumerate(items) if ngram.lm_for(self._lms, it.language)]
        scores = [
            Score(None, ngram.NO_LANGUAGE_MODEL, f"no n-gram model: set {self._option('lm')}")
        ] * len(items)
        outputs = self._by_language([items[i] for i in with_lm], [audios[i] for i in with_lm])
        texts = self._lm_texts([items[i] for i in with_lm], [audios[i] for i in with_lm])
        for k, i in enumerate(with_lm):
            model = self._asr_model(items[i].language)
            greedy = self._transcripts.text(model, outputs[k])
            decoded = texts[k]
            if isinstance(decoded, Exception):
                scores[i] = failure_score(decoded)
                continue
            scores[i] = _rate(self._transcripts, greedy, decoded, items[i].language)
        return scores
