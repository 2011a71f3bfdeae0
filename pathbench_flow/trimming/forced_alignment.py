"""The trimmer (FATrimmer): its backends, what it records per utterance, and the dispatch to the
backend each language uses; it trims the non-speech before and after an utterance.

Why: corpora of pathological speech are recorded with very different amounts of silence and
noise around each utterance, and measures such as speech rate, pause and voice-quality features
count it as part of the utterance. The workflow therefore finds where speech starts and ends,
stores those boundaries once per utterance, and every measure reads the same trimmed span.

Backends (``backend`` in the configuration):

- ``pocketsphinx``: forced alignment of the transcription with PocketSphinx's US English model
  (:mod:`pathbench_flow.trimming.sphinx`); speech runs from the first to the last aligned word.
  English only.
- ``energy``: frame energy against thresholds set per utterance, relative to its loudest
  frames and to its background noise (:mod:`pathbench_flow.trimming.energy`); works for every
  language and needs no transcription.
- ``wav2vec2``: PathBench's FATrimmer: CTC forced alignment of the espeak-ng phonemised
  transcription with a wav2vec2 phone model (:mod:`pathbench_flow.trimming.wav2vec2`;
  ``wav2vec2_model_dir``: a local directory or an id in the local Hugging Face cache, e.g.
  facebook/wav2vec2-xlsr-53-espeak-cv-ft); speech runs from the first non-blank frame to one
  frame after the last. Every language espeak-ng speaks; needs torch and transformers; never
  touches the network. ``margin_s: 0`` gives PathBench's boundaries exactly.
- ``none``: no trimming.
- ``auto`` (default): ``pocketsphinx`` for English, ``energy`` for every other language.

Both boundaries are widened by ``margin_s`` (default 0.05 s) and clipped to the audio, so an
onset the detector places a frame late is not cut off.

Statuses recorded per utterance (:class:`TrimRecord`):

- ``aligned``: trimmed at forced-alignment boundaries.
- ``energy``: trimmed at energy boundaries.
- ``untrimmed``: backend ``none``.
- ``segment_untrimmed``: the utterance has an explicit segment (Kaldi ``segments``); someone
  already cut it, and trimming inside a cut could only remove speech.
- ``oov_fallback``: the transcription has words the aligner cannot pronounce; untrimmed.
- ``failed_fallback``: the backend found no speech, the alignment failed or was implausible
  (see ``min_frame_score``), or the language is not supported by the chosen backend; untrimmed.

Both fallbacks keep the whole (plainly loaded) utterance and say why in ``message``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import cut, load_audio
from pathbench_flow.common.status import (
    ALIGNED,
    ENERGY_TRIMMED,
    FAILED_FALLBACK,
    OOV_FALLBACK,
    SEGMENT_UNTRIMMED,
    UNTRIMMED,
    NoScore,
)
from pathbench_flow.trimming.energy import EnergySettings, energy_speech_span
from pathbench_flow.trimming.sphinx import (
    AlignmentError,
    SphinxModels,
    align_words,
    check_vocabulary,
    dictionary_words,
    frames_to_span,
    is_english,
    is_filler,
    phone_loop_frame_scores,
    relative_score,
    to_pcm16,
)
from pathbench_flow.trimming.wav2vec2 import Wav2Vec2Aligner

AUTO, POCKETSPHINX, ENERGY, NONE, WAV2VEC2 = "auto", "pocketsphinx", "energy", "none", "wav2vec2"
BACKENDS = (AUTO, POCKETSPHINX, ENERGY, NONE, WAV2VEC2)


class TrimFailed(Exception):
    """The backend found no speech span; the utterance is kept whole (``failed_fallback``)."""


@dataclass(frozen=True)
class TrimRecord:
    """What trimming did to one utterance; times in seconds from the utterance's first sample."""

    backend: str
    status: str
    trim_start_s: float
    trim_end_s: float
    n_words_aligned: int = 0
    message: str = ""


@dataclass(frozen=True)
class TrimResult:
    """Trimmed audio at ``fs`` and its record; ``audio`` is None only for an empty recording."""

    audio: np.ndarray | None
    fs: int
    record: TrimRecord


@dataclass
class FATrimmer:
    """Finds and cuts the speech span of utterances; holds its models for the whole job.

    ``min_frame_score`` (nats per frame, None to skip the check) rejects implausible
    PocketSphinx alignments. Forced alignment with wide beams aligns even a wrong
    transcription, so the trimmer also decodes the utterance with a free phone loop and
    compares, over the frames of the aligned words, how much worse the words fit than the best
    free phones (:func:`pathbench_flow.trimming.sphinx.relative_score`). Comparing with the free
    loop cancels what noise does to both. Measured (espeak-ng sentences in white, pink and
    brown noise;
    pocketsphinx-testdata read speech): correct transcriptions -1.9 to -0.1 at 10-20 dB SNR,
    -2.7 to -0.6 at 0 dB, -0.2 to +0.5 for read speech; another sentence's transcription
    -2.5 at best (sentences sharing several words), usually -3 to -6. Hence -2.2. The loop pass
    costs about as much as the alignment itself.
    """

    backend: str = AUTO
    margin_s: float = 0.05
    min_frame_score: float | None = -2.2
    energy: EnergySettings = field(default_factory=EnergySettings)
    wav2vec2_model_dir: str | None = None
    models: SphinxModels = field(default_factory=SphinxModels)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown trimming backend {self.backend!r}; one of {BACKENDS}")
        self._wav2vec2: Wav2Vec2Aligner | None = None
        if self.backend == WAV2VEC2:
            if self.wav2vec2_model_dir is None:
                raise ValueError("backend wav2vec2 needs wav2vec2_model_dir")
            self._wav2vec2 = Wav2Vec2Aligner(self.wav2vec2_model_dir)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> FATrimmer:
        """Build from the workflow's ``trimming`` section (keys as the constructor's names)."""
        settings = dict(config)
        energy = settings.pop("energy", {})
        known = {f.name for f in fields(EnergySettings)}
        unknown = set(energy) - known
        if unknown:
            raise ValueError(f"unknown energy settings: {sorted(unknown)}")
        return cls(energy=EnergySettings(**energy), **settings)

    def backend_for(self, language: str) -> str:
        """The backend used for utterances in ``language`` (resolves ``auto``)."""
        if self.backend == AUTO:
            return POCKETSPHINX if is_english(language) else ENERGY
        return self.backend

    def trim(
        self,
        audio_path: str | Path,
        transcription: str,
        language: str,
        start_time: float = 0.0,
        end_time: float = -1.0,
    ) -> TrimResult:
        """Load one utterance and cut it to its speech span (or fall back, see the module doc)."""
        audio = load_audio(audio_path, start_time, end_time)
        duration = len(audio) / SAMPLE_RATE
        if start_time > 0 or end_time > 0:
            record = TrimRecord(
                self.backend_for(language),
                SEGMENT_UNTRIMMED,
                0.0,
                duration,
                message=f"explicit segment {start_time:.3f}-{end_time:.3f} s is kept whole",
            )
        else:
            record = self.find_speech(audio, transcription, language)
        if len(audio) == 0:
            return TrimResult(None, SAMPLE_RATE, record)
        return TrimResult(cut(audio, record.trim_start_s, record.trim_end_s), SAMPLE_RATE, record)

    def find_speech(self, audio: np.ndarray, transcription: str, language: str) -> TrimRecord:
        """Speech boundaries of already-loaded audio (at :data:`pathbench_flow.SAMPLE_RATE`)."""
        backend = self.backend_for(language)
        duration = len(audio) / SAMPLE_RATE
        if backend == NONE:
            return TrimRecord(backend, UNTRIMMED, 0.0, duration)
        try:
            if len(audio) == 0:
                raise TrimFailed("empty audio")
            status, span, n_words = self._speech_span(backend, audio, transcription, language)
        except NoScore as error:
            return TrimRecord(backend, OOV_FALLBACK, 0.0, duration, message=error.reason)
        except (TrimFailed, AlignmentError) as error:
            return TrimRecord(backend, FAILED_FALLBACK, 0.0, duration, message=str(error))
        start = max(0.0, span[0] - self.margin_s)
        end = min(duration, span[1] + self.margin_s)
        return TrimRecord(backend, status, start, end, n_words)

    def _speech_span(
        self, backend: str, audio: np.ndarray, transcription: str, language: str
    ) -> tuple[str, tuple[float, float], int]:
        """Status, speech span and number of words aligned, by the given backend."""
        if backend == ENERGY:
            span = energy_speech_span(audio, self.energy)
            if span is None:
                raise TrimFailed("no frame passes the energy thresholds")
            return ENERGY_TRIMMED, span, 0
        if backend == WAV2VEC2:
            assert self._wav2vec2 is not None  # built in __post_init__ for this backend
            words = dictionary_words(transcription)  # counted; phonemise cleans the text
            try:
                span = self._wav2vec2.speech_span(audio, transcription, language)
            except ValueError as error:
                raise TrimFailed(str(error)) from error
            return ALIGNED, span, len(words)
        if not is_english(language):
            raise TrimFailed(f"pocketsphinx has no model for language {language!r}")
        span, n_words = self._sphinx_span(audio, transcription)
        return ALIGNED, span, n_words

    def _sphinx_span(
        self, audio: np.ndarray, transcription: str
    ) -> tuple[tuple[float, float], int]:
        """Speech span from a PocketSphinx word alignment, and the number of words aligned."""
        decoder = self.models.aligner
        words = dictionary_words(transcription)
        if not words:
            raise TrimFailed("the transcription has no words")
        check_vocabulary(decoder, words)
        pcm = to_pcm16(audio)
        segments = align_words(decoder, pcm, words)
        speech = [i for i, seg in enumerate(segments) if not is_filler(seg.word)]
        inner = segments[speech[0] : speech[-1] + 1]  # the words and the pauses between them
        first, last = inner[0].start_frame, inner[-1].end_frame
        if self.min_frame_score is not None:
            free = phone_loop_frame_scores(decoder, pcm, self.models.FREE_LOOP)
            fit = relative_score(sum(seg.score for seg in inner), first, last - first + 1, free)
            if fit < self.min_frame_score:
                raise AlignmentError(
                    f"implausible alignment: the words fit {fit:.2f} nats/frame worse than free "
                    f"phones (limit {self.min_frame_score}); transcription probably wrong"
                )
        return frames_to_span(first, last), len(words)
