"""Trimming the non-speech before and after an utterance.

Why: corpora of pathological speech are recorded with very different amounts of silence and
noise around each utterance, and measures such as speech rate, pause and voice-quality features
count it as part of the utterance. The workflow therefore finds where speech starts and ends,
stores those boundaries once per utterance, and every measure reads the same trimmed span.

Backends (``backend`` in the configuration):

- ``pocketsphinx``: forced alignment of the transcription with PocketSphinx's US English model
  (:mod:`pathbench_flow.trimming.sphinx`); speech runs from the first to the last aligned word.
  English only.
- ``energy``: frame energy against thresholds set per utterance, relative to its loudest
  frames and to its background noise (:func:`energy_speech_span`); works for every language
  and needs no transcription.
- ``wav2vec2``: PathBench's FATrimmer: CTC forced alignment of the espeak-ng phonemised
  transcription with a wav2vec2 phone model (``wav2vec2_model_dir``: a local directory or an
  id in the local Hugging Face cache, e.g. facebook/wav2vec2-xlsr-53-espeak-cv-ft); speech
  runs from the first non-blank frame to one frame after the last. Every language espeak-ng
  speaks; needs torch and transformers; never touches the network. ``margin_s: 0`` gives
  PathBench's boundaries exactly.
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

import importlib
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
    OOV,
    OOV_FALLBACK,
    SEGMENT_UNTRIMMED,
    UNTRIMMED,
    NoScore,
)
from pathbench_flow.neural import models as loading
from pathbench_flow.neural.ctc import forced_path
from pathbench_flow.neural.phonemes import for_vocabulary, phonemise
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


@dataclass(frozen=True)
class EnergySettings:
    """Settings of the energy detector; the defaults are explained in :func:`energy_speech_span`."""

    frame_s: float = 0.025
    hop_s: float = 0.010
    n_bands: int = 8
    low_hz: float = 100.0
    high_hz: float = 8000.0
    floor_percentile: float = 10.0
    snr_margin_db: float = 6.0
    peak_percentile: float = 95.0
    dynamic_range_db: float = 35.0
    min_speech_s: float = 0.06
    hangover_s: float = 0.2


BAND_CHUNK_FRAMES = 4096
"""Frames analysed at once by :func:`band_levels_db`: 41 s of audio, about 60 MB of windows and
spectra. Whole-recording arrays took 66 bytes per sample, 7.6 GB for a two-hour recording. A
power of two: numpy's FFT transforms rows in SIMD groups, and a lone row can differ in the last
bit, so chunks must start where a group of the whole array would."""


def band_levels_db(
    audio: np.ndarray,
    settings: EnergySettings,
    sample_rate: int = SAMPLE_RATE,
    chunk_frames: int = BAND_CHUNK_FRAMES,
) -> np.ndarray:
    """Level in dB of every full frame (rows) in log-spaced bands (columns), Hann-windowed.

    Frames are analysed ``chunk_frames`` at a time, so memory stays bounded however long the
    recording; with chunks of a power of two (:data:`BAND_CHUNK_FRAMES`) the levels are the
    same bits as in one piece."""
    frame = int(round(settings.frame_s * sample_rate))
    hop = int(round(settings.hop_s * sample_rate))
    if len(audio) < frame:
        return np.empty((0, settings.n_bands))
    windows = np.lib.stride_tricks.sliding_window_view(audio, frame)[::hop]
    window = np.hanning(frame)
    n_fft = 1 << (frame - 1).bit_length()
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    high = min(settings.high_hz, sample_rate / 2)
    edges = np.geomspace(settings.low_hz, high, settings.n_bands + 1)
    edges[-1] = np.nextafter(high, np.inf)  # keep the Nyquist bin in the top band
    masks = [(freqs >= lo) & (freqs < hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    levels = np.empty((windows.shape[0], settings.n_bands))
    for start in range(0, windows.shape[0], chunk_frames):
        stop = start + chunk_frames
        power = np.abs(np.fft.rfft(windows[start:stop] * window, n_fft, axis=1)) ** 2
        levels[start:stop] = np.stack([power[:, mask].sum(axis=1) for mask in masks], axis=1)
    return 10.0 * np.log10(levels + 1e-20)


def energy_speech_span(
    audio: np.ndarray, settings: EnergySettings = EnergySettings(), sample_rate: int = SAMPLE_RATE
) -> tuple[float, float] | None:
    """First and last second of speech by frame energy, or None when no frame qualifies.

    A frame is speech when both hold:

    - Its total level (all bands) is within ``dynamic_range_db`` (35 dB) of the
      ``peak_percentile`` (95th) frame level: a percentile rather than the maximum, so one click
      does not set the scale; 35 dB keeps weak fricatives and the decay of the last vowel. This
      alone decides in clean recordings, where everything else is near digital silence.
    - Its level exceeds the background noise by ``snr_margin_db`` (6 dB) on average over
      ``n_bands`` log-spaced bands between ``low_hz`` and ``high_hz``, each band's noise being
      its ``floor_percentile`` (10th) level, i.e. the noise whenever a tenth of the utterance
      is non-speech. Per band, because background noise is rarely white: with room rumble or
      hum a single broadband threshold either sits under the noise (everything is speech) or
      above the weak consonants. Measured on espeak-ng speech padded with white, pink and brown
      noise at 20 dB SNR, both boundaries were within 100 ms in every case.

    Speech runs separated by less than ``hangover_s`` are joined (pauses between words are not
    edges); joined runs shorter than ``min_speech_s`` are dropped (clicks, breaths). Only the
    first and last remaining runs matter. Deterministic: no randomness, no state.
    """
    levels = band_levels_db(audio, settings, sample_rate)
    if levels.shape[0] == 0:
        return None
    total = 10.0 * np.log10(np.sum(10.0 ** (levels / 10.0), axis=1))
    loud = total > np.percentile(total, settings.peak_percentile) - settings.dynamic_range_db
    floor = np.percentile(levels, settings.floor_percentile, axis=0)
    above_noise = np.maximum(levels - floor, 0.0).mean(axis=1) > settings.snr_margin_db
    runs = _speech_runs(loud & above_noise, settings.hangover_s / settings.hop_s)
    min_frames = settings.min_speech_s / settings.hop_s
    kept = [(first, last) for first, last in runs if last - first + 1 >= min_frames]
    if not kept:
        return None
    hop = int(round(settings.hop_s * sample_rate))
    frame = int(round(settings.frame_s * sample_rate))
    start = kept[0][0] * hop / sample_rate
    end = (kept[-1][1] * hop + frame) / sample_rate
    return start, min(end, len(audio) / sample_rate)


def _speech_runs(active: np.ndarray, max_gap_frames: float) -> list[tuple[int, int]]:
    """Runs of active frames as (first, last) indices, joining runs with short gaps between."""
    edges = np.diff(np.concatenate([[0], active.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1) - 1
    runs: list[tuple[int, int]] = []
    for first, last in zip(starts.tolist(), ends.tolist(), strict=True):
        if runs and first - runs[-1][1] - 1 < max_gap_frames:
            runs[-1] = (runs[-1][0], last)
        else:
            runs.append((first, last))
    return runs


def ctc_forced_span(log_probs: np.ndarray, tokens: list[int], blank: int) -> tuple[int, int]:
    """First and last frame (inclusive) emitting a token in the best CTC alignment of ``tokens``.

    ``log_probs`` is frames x vocabulary; the search is
    :func:`pathbench_flow.neural.ctc.forced_path`.
    Raises ValueError when ``tokens`` cannot fit.
    """
    path = forced_path(log_probs, tokens, blank)
    emitting = np.flatnonzero(path != blank)
    return int(emitting[0]), int(emitting[-1])


class Wav2Vec2Aligner:
    """PathBench's FATrimmer: CTC forced alignment of the phonemised transcription with a
    wav2vec2 phone model (PathBench: facebook/wav2vec2-xlsr-53-espeak-cv-ft).

    The model is a local directory or an id in the local Hugging Face cache
    (:mod:`pathbench_flow.neural.models`); torch and transformers are imported only here, so the
    rest of the package works without them. Nothing is ever downloaded.
    """

    def __init__(self, model: str | Path) -> None:
        option = "fa_trim.wav2vec2_model_dir"
        try:
            directory = loading.resolve(str(model), option)
        except loading.ModelUnavailable as error:
            raise FileNotFoundError(f"wav2vec2 model not found: {error}") from None
        # The tokenizer reads without them, but every alignment runs the network: say so
        # before any job starts, not at its first utterance.
        try:
            for library in ("torch", "transformers"):
                importlib.import_module(library)
        except ImportError as error:
            raise ImportError(
                "the wav2vec2 trimming backend needs torch and transformers installed "
                f"({error}); choose backend auto, pocketsphinx or energy otherwise"
            ) from error
        self.model = loading.load_ctc(str(directory))

    def speech_span(
        self, audio: np.ndarray, transcription: str, language: str
    ) -> tuple[float, float]:
        """Seconds from the first non-blank frame to one frame after the last (PathBench's rule).

        Phones come from espeak-ng in ``language`` with PathBench's mapping onto the model's
        vocabulary. Raises NoScore("oov") when no phone is left and ValueError when the
        alignment is impossible (too short for the phones).
        """
        if len(audio) < loading.MIN_SAMPLES:
            raise ValueError(f"{len(audio)} samples; wav2vec2 needs {loading.MIN_SAMPLES}")
        phones = for_vocabulary(phonemise(transcription, language), self.model.vocab)
        if not phones:
            raise NoScore(OOV, "no phone of the transcription in the wav2vec2 vocabulary")
        log_probs = self.model.log_posteriors([audio])[0]
        tokens = [self.model.vocab[p] for p in phones]
        first, last = ctc_forced_span(log_probs, tokens, self.model.blank)
        seconds_per_frame = len(audio) / SAMPLE_RATE / log_probs.shape[0]
        return first * seconds_per_frame, min(
            len(audio) / SAMPLE_RATE, (last + 2) * seconds_per_frame
        )


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
