"""Throughput of the model-based measures on CPU, × real time, batched and one by one.

Run: ``nice python benchmarks/neural.py [--utterances 16] [--seconds 3] [--threads 2]``.
The models are base-size wav2vec2 CTC models (``Wav2Vec2Config`` defaults: 12 layers,
768 dimensions, 95 M parameters) with the layer-norm feature encoder of PathBench's large
models, randomly initialised: the compute is the real one, only the outputs are meaningless.
Each model is loaded (and run once) before timing, as a workflow job loads it once; wall-clock
time is reported because torch runs ``--threads`` threads. Goal (issue 13): ≥ 2× real time per
measure on 2 CPU cores. PathBench's own models are large (24 layers, 1024 dimensions, ~3.3×
the compute of base).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from tiny_models import build_char_model, build_phone_model, write_arpa  # noqa: E402

from pathbench_flow import SAMPLE_RATE, registry  # noqa: E402
from pathbench_flow.evaluator import Item, evaluate_all  # noqa: E402
from pathbench_flow.trimming.vad import FATrimmer  # noqa: E402

BASE = dict(  # Wav2Vec2Config's defaults (base size), spelled out
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    conv_dim=(512,) * 7,
    num_conv_pos_embeddings=128,
    num_conv_pos_embedding_groups=16,
)
WORDS = ["the", "cat", "sat", "on", "a", "mat", "while", "blue", "water", "ran", "over", "it"]


def corpus(directory: Path, n: int, seconds: float) -> list[Item]:
    """``n`` utterances of noise-like audio with English transcriptions of ~2 words/s."""
    rng = np.random.default_rng(0)
    items = []
    for k in range(n):
        path = directory / f"u{k}.wav"
        samples = int(seconds * SAMPLE_RATE * rng.uniform(0.8, 1.2))
        sf.write(path, 0.1 * rng.standard_normal(samples), SAMPLE_RATE, subtype="PCM_16")
        text = " ".join(rng.choice(WORDS, size=max(1, int(seconds * 2))))
        items.append(Item(f"u{k}", str(path), transcription=text, language="en"))
    return items


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        phone = str(build_phone_model(root / "phone", **BASE))
        char = str(build_char_model(root / "char", **BASE))
        lm = str(write_arpa(root / "lm.arpa", WORDS))
        items = corpus(root, args.utterances, args.seconds)
        audio_s = sum(sf.info(i.audio_path).duration for i in items)
        options = {
            "artp": {"model": phone},
            "artp_old": {"model": phone},
            "dper": {"model": phone},
            "per": {"models": {"en": char}},
            "double_asr": {"models": {"en": char}, "lm": lm},
            "artp_double_asr": {"model": phone, "models": {"en": char}, "lm": lm},
        }
        print(f"{len(items)} utterances, {audio_s:.1f} s of audio, {args.threads} threads")
        print("| measure | batched (8) × real time | one by one × real time |")
        print("|---|---:|---:|")
        for name, opts in options.items():
            rates = []
            for batch_size in (8, 1):
                evaluator = registry.create(name, **opts, batch_size=batch_size)
                evaluate_all(evaluator, items[:1])  # load the model(s) once, as a job does
                seconds = timed(lambda e=evaluator: evaluate_all(e, items))
                rates.append(audio_s / seconds)
            print(f"| {name} | {rates[0]:.1f} | {rates[1]:.1f} |")
        refs = tuple((i.audio_path, 0.0, -1.0) for i in items[:2])
        nad = registry.create("nad", model=phone)
        nad.evaluate(Item("w", items[0].audio_path, reference_audios=refs))
        tests = [Item(i.utt_id, i.audio_path, reference_audios=refs) for i in items[2:]]
        seconds = timed(lambda: [nad.evaluate(t) for t in tests])
        nad_audio = sum(sf.info(t.audio_path).duration for t in tests)
        print(f"| nad (wav2vec2 layer 10, references cached) | | {nad_audio / seconds:.1f} |")
        trimmer = FATrimmer(backend="wav2vec2", wav2vec2_model_dir=phone)
        trimmer.trim(items[0].audio_path, items[0].transcription, "en")
        seconds = timed(
            lambda: [trimmer.trim(i.audio_path, i.transcription, i.language) for i in items]
        )
        print(f"| fa_trim wav2vec2 | | {audio_s / seconds:.1f} |")


if __name__ == "__main__":
    main()
