"""Reference-audio measures: the test utterance against healthy speakers saying the same text.

Their ``fa`` variant trims the references as well as the test utterance: the generic wrapper
(:class:`~pathbench_flow.evaluators.base.TrimmedReferenceAudioEvaluator`) does, and each measure's
``trim_rule`` says what becomes of recordings whose trim failed (NAD: the default group
fallback; P-ESTOI: PathBench's convention, :meth:`PEstoiEvaluator.trim_rule`).

Many test utterances share the same references (same text, same gender), so features of each
reference recording, and P-ESTOI templates of each reference set, are cached for the lifetime
of the evaluator, which is one workflow job: each reference is decoded at most once per job.
The ``fa`` wrapper likewise asks the trimmer for a recording's trim status once per job, and
loads its trimmed audio only when its features are computed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Annotated

import numpy as np

from pathbench_flow import tracks
from pathbench_flow.common.lazy import lazy_module
from pathbench_flow.common.status import NO_REFERENCES, SEGMENT_UNTRIMMED, TRIM_FAILED, NoScore
from pathbench_flow.evaluators.base import (
    NO_REFERENCE_MESSAGE,
    Item,
    ReferenceAudioEvaluator,
    Score,
    TrimGroup,
    noted,
)
from pathbench_flow.evaluators.options import MODEL_NAME, Integer, OneOf, checked
from pathbench_flow.neural import model_tracks
from pathbench_flow.neural import models as loading

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

    def _score_against(
        self, test: np.ndarray, references: tuple[Hashable, ...], audio: Callable
    ) -> float:
        template = self._template(references, audio)
        return self._compare(pestoi.pestoi_features(test), template)

    def _compare(self, test: np.ndarray, template: np.ndarray) -> float:
        return pestoi.p_estoi(test, template)

    def trim_rule(self, group: TrimGroup) -> Score:
        """PathBench's FA P-ESTOI: an utterance with an explicit segment (Kaldi ``segments``,
        e.g. COPAS words) counts as cut (its ``use_segments``), any other only with a good
        trim. A reference that does not count is dropped; a test that does not scores 0.0 with
        status ``trim_failed`` (PathBench's value for an utterance it could not trim). Without
        any reference there is nothing to compare with, trimmed or not, so the score is NaN
        with status ``no_references``: a 0.0 there would be a fabricated worst score that
        enters correlations."""

        def counts(item: Item) -> bool:
            return group.good(item) or group.status(item) == SEGMENT_UNTRIMMED

        if not group.references:
            return Score(None, NO_REFERENCES, NO_REFERENCE_MESSAGE)
        if not counts(group.test):
            return Score(0.0, TRIM_FAILED, "the test utterance has no forced-alignment trim")
        named = {f"{ref.audio_path}@{ref.start}-{ref.end}": ref for ref in group.references}
        keys = tuple((name, True) for name, ref in named.items() if counts(ref))
        result = group.score(
            lambda: group.audio(group.test, True),
            keys,
            lambda key: group.audio(named[key[0]], True),
        )
        dropped = len(named) - len(keys)
        return noted(result, f"{dropped} reference(s) dropped: trim failed" if dropped else "")


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

    def _score_against(
        self, test: np.ndarray, references: tuple[Hashable, ...], audio: Callable
    ) -> float:
        features = [self._features.get(k, lambda k=k: audio(k)) for k in references]
        usable = [f for f in features if f is not None]
        if not usable:
            raise NoScore(NO_REFERENCES, "no reference long enough for NAD")
        return nad.nad(self._extract(test), usable)
