"""Speed of utterance trimming, in seconds of audio per CPU second (x real time).

Goal: pocketsphinx forced alignment >= 20x real time, so trimming a corpus costs a small
fraction of scoring it. Run: ``python benchmarks/bench_alignment.py [--sentences 22]``.
Needs espeak-ng (the test sentences, in pink noise at 20 dB SNR, as in tests/test_vad.py)
and uses pocketsphinx-testdata's read speech when installed. Reported: word alignment alone
(``min_frame_score=None``), alignment plus the free-phone-loop plausibility check (the
default), and the energy detector. CPU time (``time.process_time``) because machines are
shared; decoders are built before timing, as a job builds them once.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.audio import load_audio
from pathbench_flow.testing.speech_fixtures import (
    SENTENCES,
    TESTDATA,
    pad_in_noise,
    recorded_utterances,
    spoken_sentences,
)
from pathbench_flow.trimming.forced_alignment import FATrimmer
from pathbench_flow.trimming.sphinx import SphinxModels

Utterance = tuple[np.ndarray, str]


def speed(trimmer: FATrimmer, utterances: list[Utterance]) -> float:
    """x real time of ``find_speech`` over ``utterances``; every one must be trimmed."""
    seconds = sum(len(audio) for audio, _ in utterances) / SAMPLE_RATE
    start = time.process_time()
    records = [trimmer.find_speech(audio, text, "en") for audio, text in utterances]
    elapsed = time.process_time() - start
    failed = [r for r in records if r.status not in ("aligned", "energy")]
    if failed:
        raise RuntimeError(f"{len(failed)} utterances were not trimmed: {failed[0]}")
    return seconds / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=len(SENTENCES))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    corpora: dict[str, list[Utterance]] = {
        "espeak-ng in pink noise": [
            (pad_in_noise(speech, rng, exponent=1.0).audio, text)
            for speech, text in list(zip(spoken_sentences(), SENTENCES, strict=True))[
                : args.sentences
            ]
        ]
    }
    if TESTDATA.is_dir():
        corpora["pocketsphinx-testdata"] = [
            (load_audio(path), text) for path, text in recorded_utterances()
        ]
    models = SphinxModels()
    models.aligner  # noqa: B018  (build the decoder outside the timing)
    trimmers = {
        "alignment only": FATrimmer("pocketsphinx", min_frame_score=None, models=models),
        "alignment + check": FATrimmer("pocketsphinx", models=models),
        "energy": FATrimmer("energy"),
    }
    for corpus, utterances in corpora.items():
        seconds = sum(len(audio) for audio, _ in utterances) / SAMPLE_RATE
        print(f"{corpus}: {len(utterances)} utterances, {seconds:.0f} s")
        for name, trimmer in trimmers.items():
            print(f"  {name:18s} {speed(trimmer, utterances):8.1f} x real time")


if __name__ == "__main__":
    main()
