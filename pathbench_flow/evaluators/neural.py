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
or one file for all), ``batch_size``. Models are loaded once per job by
:mod:`pathbench_flow.neural.models`, which also does the up-front checks (``preflight``).

The reference-free measures that need the utterance's language (DArtP, Double ASR) take the
text-aware interface only to learn the language: they never read the transcription.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.audio import load_shared
from pathbench_flow.evaluator import (
    Item,
    ReferenceFreeEvaluator,
    ReferenceTxtEvaluator,
    Score,
    guarded,
)
from pathbench_flow.languages import LANGUAGES
from pathbench_flow.neural import ctc, phonemes
from pathbench_flow.neural import lm as ngram
from pathbench_flow.neural import models as loading
from pathbench_flow.status import ERROR, TOO_SHORT, UNSUPPORTED_LANGUAGE, NoScore

EMPTY_PHONEMISATION = "empty_phonemisation"
"""Status when a text yields no phone the model knows (nothing to align or compare)."""
LOAD_CHUNK = 64
"""Utterances whose audio is held in memory at once; the model batches within a chunk."""
PATHBENCH_LANGUAGES = LANGUAGES
ASR_DEFAULT: Mapping[str, str] = loading.ASR_MODELS


def _chunks(indices: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(indices), size):
        yield indices[start : start + size]


class _ModelEvaluator:
    """Shared plumbing: option checks, audio loading, batching and per-item containment.

    Subclasses set ``uses`` (which of ``model``/``models``/``lm``/``espeak`` they need) and
    implement ``_score_chunk(items, audios)``, returning one Score per item.
    """

    uses: ClassVar[frozenset[str]] = frozenset()
    category = "reference-text"
    trimmable = False

    def __init__(
        self,
        model: str = loading.PHONE_MODEL,
        models: Mapping[str, str] | None = None,
        lm: str | Mapping[str, str] | None = None,
        batch_size: int = 8,
    ) -> None:
        self._check(model, models, lm)
        self.batch_size = int(batch_size)
        self._lms = ngram.lm_paths(lm)
        if "model" in self.uses:
            self._phone_dir = str(loading.resolve(model, self._option("model")))
        if "models" in self.uses:
            asr = dict(ASR_DEFAULT if models is None else models)
            self.languages = tuple(sorted(asr))
            self._asr_dirs = {
                language: str(loading.resolve(name, self._option(f"models.{language}")))
                for language, name in asr.items()
            }

    # --------------------------------------------------------------------- checking options
    @classmethod
    def _option(cls, key: str) -> str:
        return f"evaluator_options.{cls.name}.{key}"

    @classmethod
    def _check(cls, model: str, asr: Mapping[str, str] | None, lm: Any) -> None:
        """Every resource the options name, on this machine (raises ModelUnavailable)."""
        if "espeak" in cls.uses:
            try:
                phonemes.espeak_binary()
            except phonemes.PhonemiserMissing as error:
                raise loading.ModelUnavailable(f"{cls.name}: {error}") from None
        if "model" in cls.uses:
            loading.check(model, cls._option("model"))
        if "models" in cls.uses:
            for language, asr_model in (ASR_DEFAULT if asr is None else asr).items():
                loading.check(asr_model, cls._option(f"models.{language}"))
        if "lm" in cls.uses:
            for language, path in ngram.lm_paths(lm).items():
                ngram.check_lm(path, cls._option("lm" if language == "*" else f"lm.{language}"))

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

    def _by_language(self, items: list[Item], audios: list[np.ndarray]) -> dict[int, np.ndarray]:
        """ASR log-posteriors per item index, each language through its own model."""
        out: dict[int, np.ndarray] = {}
        for language in sorted({item.language for item in items}):
            picked = [i for i, item in enumerate(items) if item.language == language]
            outputs = self._asr_model(language).log_posteriors(
                [audios[i] for i in picked], self.batch_size
            )
            out.update(zip(picked, outputs, strict=True))
        return out

    def _lm_decode(self, language: str, log_posteriors: np.ndarray) -> str:
        path = ngram.lm_for(self._lms, language)
        if path is None:
            raise NoScore(
                ngram.NO_LANGUAGE_MODEL,
                f"no n-gram model for {language!r}: set {self._option('lm')} "
                "(PathBench's wiki_<lang>_token.arpa)",
            )
        asr = self._asr_model(language)
        return ngram.load_decoder(tuple(asr.labels), path).decode(log_posteriors)


def _text(model: loading.CTCModel, tokens: Sequence[int]) -> str:
    """Greedy tokens of a character model as text (``|`` is the word delimiter)."""
    labels = model.labels
    return "".join(labels[t] for t in tokens if labels[t] not in model.specials).replace("|", " ")


def _phones(model: loading.CTCModel, tokens: Sequence[int]) -> list[str]:
    """Greedy tokens of a phone model as phones (word delimiters and special tokens dropped)."""
    labels = model.labels
    return [labels[t] for t in tokens if labels[t] not in model.specials and labels[t] != "|"]


def _artp(model: loading.CTCModel, log_posteriors: np.ndarray, phones: Sequence[str]) -> float:
    """ArtP of ``phones`` (already in the model's vocabulary) on one utterance."""
    try:
        ids = [model.vocab[p] for p in phones]
        return ctc.articulatory_precision(np.exp(log_posteriors), ids, model.blank)
    except ValueError as error:
        raise NoScore(TOO_SHORT, str(error)) from None


def _reference_phones(model: loading.CTCModel, text: str, language: str) -> list[str]:
    phones = phonemes.for_vocabulary(phonemes.phonemise(text, language), model.vocab)
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

    languages = PATHBENCH_LANGUAGES
    pathbench_compatible = True
    uses = frozenset({"model", "espeak"})

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        model = self._phone_model()
        outputs = model.log_posteriors(audios, self.batch_size)
        return [self._one(model, it, lp) for it, lp in zip(items, outputs, strict=True)]

    @staticmethod
    def _one(model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        raise NotImplementedError


class ArtPEvaluator(_PhoneTextEvaluator):
    """``artp``: articulatory precision against the phonemised transcription (PathBench)."""

    name = "artp"
    unit = "posterior"

    @staticmethod
    def _one(model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        return guarded(
            lambda: _artp(
                model, log_posteriors, _reference_phones(model, item.transcription, item.language)
            )
        )


class ConfidenceEvaluator(_ModelEvaluator, ReferenceFreeEvaluator):
    """``artp_old``: PathBench's phonetic confidence, from audio alone."""

    name = "artp_old"
    unit = "posterior"
    category = "reference-free model"
    pathbench_compatible = True
    uses = frozenset({"model"})

    def _score_audio(self, audio: np.ndarray, fs: int) -> float:
        if fs != SAMPLE_RATE:
            raise ValueError(f"wav2vec2 expects {SAMPLE_RATE} Hz audio")
        if len(audio) < loading.MIN_SAMPLES:
            raise NoScore(TOO_SHORT, f"{len(audio)} samples; at least {loading.MIN_SAMPLES}")
        model = self._phone_model()
        return ctc.confidence(np.exp(model.log_posteriors([audio])[0]), model.blank)

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        model = self._phone_model()
        outputs = model.log_posteriors(audios, self.batch_size)
        return [guarded(lambda lp=lp: ctc.confidence(np.exp(lp), model.blank)) for lp in outputs]


class DArtPEvaluator(_TextModelEvaluator):
    """``artp_double_asr``: DArtP, ArtP of what the ASR model and n-gram LM heard.

    As in PathBench, a decoded text without any phone of the phone model's vocabulary is
    aligned as the single phone ``a`` (the message says so): the model heard no words, which
    must count against the speaker rather than drop the utterance.
    """

    name = "artp_double_asr"
    unit = "posterior"
    category = "reference-free model"
    pathbench_compatible = True
    uses = frozenset({"model", "models", "lm", "espeak"})
    FALLBACK = ("a",)

    def _one(self, item: Item, asr: np.ndarray, phone_lp: np.ndarray) -> Score:
        model = self._phone_model()
        note: list[str] = []

        def compute() -> float:
            text = self._lm_decode(item.language, asr)
            phones = phonemes.for_vocabulary(phonemes.phonemise(text, item.language), model.vocab)
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
        asr = self._by_language([items[i] for i in with_lm], [audios[i] for i in with_lm])
        phone = self._phone_model().log_posteriors([audios[i] for i in with_lm], self.batch_size)
        for k, i in enumerate(with_lm):
            scores[i] = self._one(items[i], asr[k], phone[k])
        return scores


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
        hypothesis = _text(model, ctc.greedy_tokens(log_posteriors, model.blank))
        return _rate(item.transcription, hypothesis, item.language)


def _rate(reference: str, hypothesis: str, language: str) -> Score:
    """Phone error rate of two texts phonemised in ``language``; the hypothesis is the message."""

    def compute() -> float:
        ref = phonemes.phonemise(reference, language)
        if not ref:
            raise NoScore(EMPTY_PHONEMISATION, f"no phones in the reference {reference!r}")
        return ctc.error_rate(ref, phonemes.phonemise(hypothesis, language))

    result = guarded(compute)
    return Score(result.value, result.status, result.message or hypothesis)


class DPEREvaluator(_PhoneTextEvaluator):
    """``dper``: phone error rate of the phone model's output against the phonemised text."""

    name = "dper"
    direction = -1
    unit = "ratio"

    @staticmethod
    def _one(model: loading.CTCModel, item: Item, log_posteriors: np.ndarray) -> Score:
        hypothesis = _phones(model, ctc.greedy_tokens(log_posteriors, model.blank))

        def compute() -> float:
            ref = phonemes.phonemise(item.transcription, item.language)
            if not ref:
                raise NoScore(EMPTY_PHONEMISATION, f"no phones in {item.transcription!r}")
            return ctc.error_rate(ref, hypothesis)

        result = guarded(compute)
        return Score(result.value, result.status, result.message or " ".join(hypothesis))


class DoubleASREvaluator(_TextModelEvaluator):
    """``double_asr``: phone error rate between the ASR model's greedy and LM transcriptions
    (the greedy one as reference, as PathBench); reference-free, reads only the language."""

    name = "double_asr"
    direction = -1
    unit = "ratio"
    category = "reference-free model"
    pathbench_compatible = True
    uses = frozenset({"models", "lm", "espeak"})

    def _score_chunk(self, items: list[Item], audios: list[np.ndarray]) -> list[Score]:
        with_lm = [i for i, it in enumerate(items) if ngram.lm_for(self._lms, it.language)]
        scores = [
            Score(None, ngram.NO_LANGUAGE_MODEL, f"no n-gram model: set {self._option('lm')}")
        ] * len(items)
        outputs = self._by_language([items[i] for i in with_lm], [audios[i] for i in with_lm])
        for k, i in enumerate(with_lm):
            model = self._asr_model(items[i].language)
            greedy = _text(model, ctc.greedy_tokens(outputs[k], model.blank))
            try:
                decoded = self._lm_decode(items[i].language, outputs[k])
            except Exception as error:  # noqa: BLE001 - recorded as status=error
                scores[i] = Score(None, ERROR, f"{type(error).__name__}: {error}")
                continue
            scores[i] = _rate(greedy, decoded, items[i].language)
        return scores
