"""Speed of the recognition measures (WER, PER, GOP), in seconds of audio per CPU second.

Run: ``python benchmarks/bench_recognition.py [--sentences 10]``. Needs espeak-ng (the test
sentences with a noise floor 30 dB down, as in tests/test_recognition.py) and uses
pocketsphinx-testdata's read speech when installed. CPU time (``time.process_time``) because
machines are shared; decoders are built before timing, as a job builds them once.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.measures.recognition import gop, per, wer
from pathbench_flow.testing.speech_fixtures import (
    SENTENCES,
    TESTDATA,
    add_noise,
    recorded_utterances,
    spoken_sentences,
)
from pathbench_flow.trimming.sphinx import SphinxModels

MEASURES = (wer, per, gop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=10)
    args = parser.parse_args()
    spoken = spoken_sentences()[: args.sentences]
    corpora = {
        "espeak-ng, 30 dB noise floor": [
            (add_noise(speech, 30.0, seed=i), text)
            for i, (speech, text) in enumerate(zip(spoken, SENTENCES, strict=False))
        ]
    }
    if TESTDATA.is_dir():
        corpora["pocketsphinx-testdata"] = [
            (load_audio(path), text) for path, text in recorded_utterances()
        ]
    models = SphinxModels()
    for decoder in ("word_recognizer", "phone_recognizer", "scorer"):
        getattr(models, decoder)  # build outside the timing
    for corpus, utterances in corpora.items():
        seconds = sum(len(audio) for audio, _ in utterances) / SAMPLE_RATE
        print(f"{corpus}: {len(utterances)} utterances, {seconds:.0f} s")
        for measure in MEASURES:
            start = time.process_time()
            values = [measure(audio, text, "en", models) for audio, text in utterances]
            speed = seconds / (time.process_time() - start)
            mean = np.mean([getattr(value, "rate", value) for value in values])
            print(f"  {measure.__name__:4s} {speed:6.1f} x real time   mean {mean:.3f}")


if __name__ == "__main__":
    main()
