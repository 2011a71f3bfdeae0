"""Reference-audio measures: the test utterance against healthy speakers saying the same text.

Their ``fa`` variant trims the references as well as the test utterance, so each measure has
its own trimming wrapper (``evaluator.trimmed(trimmer)``, applied by the scoring stage), with
the rule its measure needs for references whose trim failed.

Many test utterances share the same references (same text, same gender), so features of each
reference recording, and P-ESTOI templates of each reference set, are cached for the lifetime
of the evaluator, which is one workflow job: each reference is decoded at most once per job.
The ``fa`` wrappers likewise ask the trimmer for a recording's verdict (good trim or not) once
per job, and load its trimmed audio only when its features are computed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import numpy as np

from pathbench_flow import tracks
from pathbench_flow.audio import load_shared
from pathbench_flow.data.references import ReferenceAudio
from pathbench_flow.evaluator import (
    Evaluator,
    Item,
    ReferenceAudioEvaluator,
    ReferenceTxtAndAudioEvaluator,
    Score,
    Trimmer,
    guarded,
    trimmed_audio,
)
from pathbench_flow.lazy import lazy_module
from pathbench_flow.neural import model_tracks
from pathbench_flow.neural import models as loading
from pathbench_flow.options import MODEL_NAME, Integer, OneOf, checked
from pathbench_flow.status import (
    GOOD_TRIMS,
    NO_REFERENCES,
    SEGMENT_UNTRIMMED,
    TRIM_FAILED,
    NoScore,
)

# Loaded when a job first scores with them (librosa, numba), not when the class is read.
nad = lazy_module("pathbench_flow.measures.nad")
pestoi = lazy_module("pathbench_flow.measures.pestoi")

FeatureFn = Callable[[np.ndarray], np.ndarray]


class _FeatureCache:
    """Features per (recording, trimmed?) key; unusable recordings are remembered as None."""

    def __init__(self, compute: FeatureFn) -> None:
        self._compute = compute
        self._cache: dict[tuple, np.ndarray | None] = {}

    def get(self, key: tuple, audio: Callable[[], np.ndarray]) -> np.ndarray | None:
        if key not in self._cache:
            try:
                self._cache[key] = self._compute(audio())
            except NoScore:
                self._cache[key] = None
        return self._cache[key]


_NO_REFERENCES = "no reference recording of the same text"


def _require(references: Sequence[ReferenceAudio]) -> None:
    if not references:
        raise NoScore(NO_REFERENCES, _NO_REFERENCES)


def _noted(score: Score, note: str) -> Score:
    """``score`` with ``note`` after its message: what a trimmed variant did to the references
    must show in the row whether or not the measure succeeded."""
    return Score(score.value, score.status, "; ".join(m for m in (score.message, note) if m))


class PEstoiEvaluator(ReferenceAudioEvaluator):
    """P-ESTOI (PathBench): ESTOI against a DTW-averaged template of the references."""

    name = "p_estoi"
    shared_tracks = ("pestoi_envelopes",)
    unit = "0-1"
    pathbench_compatible = True
    trimmable = True

    def __init__(self) -> None:
        self._features = _FeatureCache(pestoi.pestoi_features)
        self._templates: dict[tuple, np.ndarray] = {}
        self._parts: dict[tuple, pestoi.TemplatePart] = {}

    def _template(self, keys: tuple, audios: Callable[[tuple], np.ndarray]) -> np.ndarray:
        """The template of the references ``keys``, each pair aligned once per job: with
        ``all`` references each test speaker's set lacks only its own recordings, so the
        sets of one text share their centroid and all but a few alignments."""
        if keys not in self._templates:
            found = [(k, self._features.get(k, lambda k=k: audios(k))) for k in keys]
            kept = [k for k, f in found if f is not None]
            features = [f for _k, f in found if f is not None]

            def part(centroid: int, reference: int) -> pestoi.TemplatePart:
                pair = (kept[centroid], kept[reference])
                if pair not in self._parts:
                    aligned = (features[centroid], features[reference])
                    self._parts[pair] = pestoi.template_part(*aligned)
                return self._parts[pair]

            self._templates[keys] = pestoi.pestoi_template(features, part)
        return self._templates[keys]

    def _score_with(self, test: np.ndarray, keys: tuple, audios: Callable) -> float:
        template = self._template(keys, audios)
        return self._compare(pestoi.pestoi_features(test), template)

    def _compare(self, test: np.ndarray, template: np.ndarray) -> float:
        return pestoi.p_estoi(test, template)

    def score(self, utt_id, audio_path, start, end, reference_audios) -> Score:
        def compute() -> float:
            _require(reference_audios)
            keys = tuple((ref, False) for ref in reference_audios)
            return self._score_with(
                load_shared(audio_path, start, end), keys, lambda key: load_shared(*key[0])
            )

        return guarded(compute)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedPEstoiEvaluator(self, trimmer)


class PStoiEvaluator(PEstoiEvaluator):
    """P-STOI: the STOI flavour of the same comparison (reported beside P-ESTOI)."""

    name = "p_stoi"

    def _compare(self, test: np.ndarray, template: np.ndarray) -> float:
        return pestoi.p_stoi(test, template)


def _nad_model_dir(name: str, features: str, model: str) -> str | None:
    """The local directory of the NAD feature model (None for MFCC features)."""
    if features == "mfcc":
        return None
    return str(loading.check(model, f"evaluator_options.{name}.model", ctc=False))


def _nad_layer(layer: int | None) -> int:
    """The hidden layer NAD compares: the option, or PathBench's when it is unset."""
    return loading.NAD_LAYER if layer is None else layer


class NADEvaluator(ReferenceAudioEvaluator):
    """Normalised alignment distance to the references (lower = closer to healthy speech).

    Features are wav2vec2 hidden layer 10 by default (PathBench's NAD, facebook/wav2vec2-large,
    a local directory or the local Hugging Face cache) or MFCCs (``features: mfcc``, no model);
    ``layer=None`` is :data:`pathbench_flow.neural.models.NAD_LAYER` (10). Either are shared
    tracks: the features of each recording are computed once, whether it is a test or a
    reference, for every job (raw and fa, control and all references) that compares with it.
    """

    name = "nad"
    direction = -1
    unit = "distance"
    trimmable = True

    @checked
    def __init__(
        self,
        features: Annotated[str, OneOf("wav2vec2", "mfcc")] = "wav2vec2",
        model: Annotated[str, MODEL_NAME] = loading.NAD_MODEL,
        layer: Annotated[int | None, Integer(0)] = None,
    ) -> None:
        model_dir = _nad_model_dir(self.name, features, model)
        layer = _nad_layer(layer)
        self._extract: FeatureFn = lambda audio: nad.nad_features(
            audio, kind=features, model_dir=model_dir, layer=layer
        )
        self._features = _FeatureCache(self._extract)

    @classmethod
    def uses_gpu(cls, options: dict) -> bool:
        return options.get("features", "wav2vec2") == "wav2vec2"

    @classmethod
    def uses_tracks(cls, options: dict) -> tuple[str, ...]:
        return tuple(use.track.name for use in cls.track_uses(options))

    @classmethod
    def track_uses(cls, options: dict) -> tuple[tracks.TrackUse, ...]:
        """MFCC features are the fixed track ``nad_mfcc``; wav2vec2 features the hidden-layer
        track of the model (:func:`pathbench_flow.neural.model_tracks.hidden_track`)."""
        features = options.get("features", "wav2vec2")
        model_dir = _nad_model_dir(cls.name, features, options.get("model", loading.NAD_MODEL))
        if model_dir is None:
            return (tracks.TrackUse(tracks.NAD_MFCC),)
        track = model_tracks.hidden_track(model_dir, _nad_layer(options.get("layer")))
        return (tracks.TrackUse(track),)

    @classmethod
    def preflight(cls, options: dict) -> None:
        """The wav2vec2 model (when those features are chosen) must be on this machine, with
        the layer compared: one it lacks would fail every utterance of the run."""
        model_dir = _nad_model_dir(
            cls.name, options.get("features", "wav2vec2"), options.get("model", loading.NAD_MODEL)
        )
        if model_dir is None:
            return
        layer, layers = _nad_layer(options.get("layer")), loading.hidden_layers(Path(model_dir))
        if layer > layers:
            raise ValueError(
                f"evaluator_options.{cls.name}.layer = {layer} is not one of the layers "
                f"0..{layers} of the model {model_dir}"
            )

    def _distance(self, test: np.ndarray, keys: Sequence[tuple], audios: Callable) -> float:
        references = [self._features.get(k, lambda k=k: audios(k)) for k in keys]
        usable = [f for f in references if f is not None]
        if not usable:
            raise NoScore(NO_REFERENCES, "no reference long enough for NAD")
        return nad.nad(self._extract(test), usable)

    def score(self, utt_id, audio_path, start, end, reference_audios) -> Score:
        def compute() -> float:
            _require(reference_audios)
            keys = [(ref, False) for ref in reference_audios]
            return self._distance(
                load_shared(audio_path, start, end), keys, lambda key: load_shared(*key[0])
            )

        return guarded(compute)

    def trimmed(self, trimmer: Trimmer) -> Evaluator:
        return TrimmedNADEvaluator(self, trimmer)


def _reference_items(
    references: Sequence[ReferenceAudio], transcription: str, language: str
) -> list[Item]:
    """References as items, so the trimmer sees them like any utterance of the same text."""
    return [
        Item(Path(path).stem, path, start, end, transcription, language)
        for path, start, end in references
    ]


class _TrimVerdicts:
    """Each recording's trim verdict, asked of the trimmer once per job.

    A reference recurs for every test utterance of its text, and with ``all`` references for
    every test of every speaker. Asking the trimmer per test decoded each reference per test
    (tests x references decodes per job), although a recording whose features are cached needs
    no audio: only its verdict decides how a group is compared. The key is everything the
    trimmer is given, so a verdict is reused only for the same question.
    """

    def __init__(self, verdict: Callable[[Item], bool]) -> None:
        self._verdict = verdict
        self._known: dict[tuple, bool] = {}

    def __call__(self, item: Item) -> bool:
        key = (item.audio_path, item.start, item.end, item.transcription, item.language)
        if key not in self._known:
            self._known[key] = self._verdict(item)
        return self._known[key]


def _estoi_audio(trimmer: Trimmer, item: Item) -> tuple[np.ndarray, bool]:
    """The audio FA P-ESTOI compares and whether it counts: PathBench's ``use_segments`` rule
    scores an utterance with an explicit segment as cut, untrimmed; any other utterance counts
    only with a real trim."""
    outcome = trimmer.trim(item.audio_path, item.transcription, item.language, item.start, item.end)
    status = outcome.record.status
    if outcome.audio is None:
        return load_shared(item.audio_path, item.start, item.end), status == SEGMENT_UNTRIMMED
    return outcome.audio, status in GOOD_TRIMS or status == SEGMENT_UNTRIMMED


class TrimmedPEstoiEvaluator(ReferenceTxtAndAudioEvaluator):
    """The ``fa`` variant of P-ESTOI (and P-STOI): FA-trimmed test and references.

    Utterances with an explicit segment (Kaldi ``segments``, e.g. COPAS words) are compared as
    cut, as PathBench does. A reference whose trim failed is dropped; a test whose trim failed
    scores 0.0 with status ``trim_failed`` (PathBench's convention for an utterance it could
    not trim). Without any
    reference there is nothing to compare with, trimmed or not, so the score is NaN with status
    ``no_references``: a 0.0 there would be a fabricated worst score that enters correlations.
    """

    def __init__(self, inner: PEstoiEvaluator, trimmer: Trimmer) -> None:
        self.inner, self.trimmer = inner, trimmer
        self.name, self.direction = inner.name, inner.direction
        self._usable = _TrimVerdicts(lambda item: _estoi_audio(trimmer, item)[1])

    def score(
        self, utt_id, audio_path, start, end, transcription, language, reference_audios
    ) -> Score:
        if not reference_audios:
            return Score(None, NO_REFERENCES, _NO_REFERENCES)
        test, ok = _estoi_audio(
            self.trimmer, Item(utt_id, audio_path, start, end, transcription, language)
        )
        if not ok:
            return Score(0.0, TRIM_FAILED, "the test utterance has no forced-alignment trim")
        references = {
            ref.audio_path + f"@{ref.start}-{ref.end}": ref
            for ref in _reference_items(reference_audios, transcription, language)
        }
        keys = tuple((name, True) for name, ref in references.items() if self._usable(ref))
        dropped = len(references) - len(keys)

        def compute() -> float:
            _require(keys)
            return self.inner._score_with(
                test, keys, lambda key: _estoi_audio(self.trimmer, references[key[0]])[0]
            )

        result = guarded(compute)
        note = f"{dropped} reference(s) dropped: trim failed" if dropped else ""
        return _noted(result, note)


class TrimmedNADEvaluator(ReferenceTxtAndAudioEvaluator):
    """The ``fa`` variant of NAD: trimmed audio, with a group-consistent fallback.

    DTW compares durations implicitly, so trimming the test but not a reference (or the
    reverse) would bias the distance. If the test or any reference lacks a good trim, the whole
    group (test and every reference) is scored untrimmed, and the message says so.
    """

    def __init__(self, inner: NADEvaluator, trimmer: Trimmer) -> None:
        self.inner, self.trimmer = inner, trimmer
        self.name, self.direction = inner.name, inner.direction
        self._trimmed = _TrimVerdicts(lambda item: trimmed_audio(trimmer, item)[1])

    def score(
        self, utt_id, audio_path, start, end, transcription, language, reference_audios
    ) -> Score:
        members = [
            Item(utt_id, audio_path, start, end, transcription, language),
            *_reference_items(reference_audios, transcription, language),
        ]
        verdicts = [self._trimmed(member) for member in members]
        grouped = all(verdicts)

        def audio(member: Item) -> np.ndarray:
            if grouped:
                return trimmed_audio(self.trimmer, member)[0]
            return load_shared(member.audio_path, member.start, member.end)

        keys = [((m.audio_path, m.start, m.end), grouped) for m in members[1:]]
        by_key = dict(zip(keys, members[1:], strict=True))

        def compute() -> float:
            _require(reference_audios)
            return self.inner._distance(audio(members[0]), keys, lambda key: audio(by_key[key]))

        result = guarded(compute)
        if grouped:
            return result
        failed = [m.utt_id for m, good in zip(members, verdicts, strict=True) if not good]
        note = f"group fallback to untrimmed audio (no good trim for {', '.join(failed)})"
        return _noted(result, note)
