"""The wav2vec2 speech span: CTC forced alignment of the espeak-ng phonemised transcription with
a wav2vec2 phone model (PathBench's FATrimmer rule).

The trimmer's ``wav2vec2`` backend (:class:`pathbench_flow.trimming.forced_alignment.FATrimmer`).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.status import OOV, NoScore
from pathbench_flow.neural import models as loading
from pathbench_flow.neural.ctc import forced_path
from pathbench_flow.neural.phonemes import for_vocabulary, phonemise


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
