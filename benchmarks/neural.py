"""CPU time of the model-based measures on one dataset, with their models' outputs as shared
tracks and without, and why the CPU runs models one utterance at a time.

Run: ``nice python benchmarks/neural.py [--speakers 4] [--texts 4] [--seconds 3] [--threads 1]``.
The models are base-size wav2vec2 CTC models (``Wav2Vec2Config`` defaults: 12 layers,
768 dimensions, 95 M parameters) with the layer-norm feature encoder of PathBench's large
models, randomly initialised: the compute is the real one, only the outputs are meaningless.
PathBench's own models are large (24 layers, 1024 dimensions, ~3.3x the compute of base). The
corpus: ``--texts`` texts said by ``--speakers`` speakers (noise-like audio of ~``--seconds``
s), plus one control recording per text, the reference set.

1. Padded batches against one by one: :meth:`CTCModel.log_posteriors` made to batch (as it
   does on a GPU) on three mixes of lengths, CPU seconds per batch size.
2. The model-measure jobs of one dataset (one shard: the seven measures; NAD with wav2vec2
   features in its four jobs, raw and fa, control and all references): each job's CPU
   seconds, measured in this process with the caches a new job starts without emptied first
   (models, LMs, phonemes, audio, tracks; the ~1.7 s of importing torch and transformers that
   every such job pays is left out). Once with every job running its own models (no track
   files), once as the workflow runs them: one track job per model output, shard and variant,
   then each measure's job reading those files. Forward passes count the utterances that went
   through a network.
3. The wav2vec2 trimming backend, x real time.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import soundfile as sf

from pathbench_flow import SAMPLE_RATE, registry, tracks
from pathbench_flow.audio import load_shared
from pathbench_flow.evaluator import Item, evaluate_all
from pathbench_flow.neural import lm, model_tracks, models, phonemes
from pathbench_flow.stages.score import load_declared_tracks
from pathbench_flow.stages.tracks import variant_audio
from pathbench_flow.status import ALIGNED
from pathbench_flow.testing.tiny_models import build_char_model, build_phone_model, write_arpa
from pathbench_flow.tracks.store import load_tracks, track_rows, write_track
from pathbench_flow.trimming.vad import FATrimmer

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
MEASURES = ("artp", "artp_old", "dper", "per", "double_asr", "artp_double_asr")
NAD_JOBS = tuple((variant, kind) for variant in ("raw", "fa") for kind in ("control", "all"))


@dataclass
class Corpus:
    tests: list[Item]
    controls: list[Item]

    def references(self, item: Item, kind: str) -> tuple[tuple[str, float, float], ...]:
        """PathBench's reference sets: ``control`` the control recording of the same text,
        ``all`` also every other speaker's recording of it (tests that are references too)."""
        same = [c for c in self.controls if c.transcription == item.transcription]
        if kind == "all":
            same += [t for t in self.tests if t.transcription == item.transcription and t != item]
        return tuple((r.audio_path, 0.0, -1.0) for r in same)


def corpus(directory: Path, speakers: int, texts: int, seconds: float) -> Corpus:
    rng = np.random.default_rng(0)
    sentences = [" ".join(rng.choice(WORDS, size=max(1, int(seconds * 2)))) for _ in range(texts)]

    def utterance(name: str, text: str) -> Item:
        path = directory / f"{name}.wav"
        samples = int(seconds * SAMPLE_RATE * rng.uniform(0.8, 1.2))
        sf.write(path, 0.1 * rng.standard_normal(samples), SAMPLE_RATE, subtype="PCM_16")
        return Item(name, str(path), transcription=text, language="en")

    tests = [utterance(f"s{s}_t{t}", sentences[t]) for s in range(speakers) for t in range(texts)]
    return Corpus(tests, [utterance(f"c_t{t}", sentences[t]) for t in range(texts)])


class FixedTrim:
    """The fa variant's trimmer: 0.1 s off both ends, an ``aligned`` trim for every utterance."""

    def trim(self, audio_path, transcription, language, start_time=0.0, end_time=-1.0):
        audio = load_shared(audio_path, start_time, end_time)[1600:-1600]
        return SimpleNamespace(audio=audio, record=SimpleNamespace(status=ALIGNED))


def _cpu_now() -> float:
    """CPU seconds of this process and its finished children (espeak-ng runs as one)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def cpu(function: Callable[[], object]) -> float:
    start = _cpu_now()
    function()
    return _cpu_now() - start


def fresh_job() -> None:
    """Empty what a new job process starts without: models, LMs, phonemes, audio, tracks."""
    for cached in (
        models.load_ctc,
        models.load_encoder,
        model_tracks.ctc_track,
        model_tracks.hidden_track,
        model_tracks.lm_track,
        lm.load_decoder,
        phonemes.phonemise,
        load_shared,
    ):
        cached.cache_clear()
    tracks.forget()


@contextmanager
def counted_passes() -> Iterator[Counter]:
    """Utterances through a CTC network or the NAD encoder while the context is open."""
    passes: Counter = Counter()
    run, hidden = models.CTCModel._run, models.Encoder.hidden

    def counted_run(self, audios):
        passes["ctc"] += len(audios)
        return run(self, audios)

    def counted_hidden(self, audio):
        passes["encoder"] += 1
        return hidden(self, audio)

    with (
        mock.patch.object(models.CTCModel, "_run", counted_run),
        mock.patch.object(models.Encoder, "hidden", counted_hidden),
    ):
        yield passes


def batching(phone: str) -> None:
    """Section 1: forced padded batches against one by one, CPU seconds."""
    rng = np.random.default_rng(1)
    model = models.load_ctc(phone)
    model.log_posteriors([rng.standard_normal(SAMPLE_RATE)])  # load once
    mixes = {
        "8 x 3.0 s": [3.0] * 8,
        "8 x 2.7-3.3 s": list(np.linspace(2.7, 3.3, 8)),
        "8 x 0.2-5.0 s": list(np.linspace(0.2, 5.0, 8)),
    }
    sizes = (1, 2, 4, 8)
    print("| lengths | " + " | ".join(f"batch {n}" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    with mock.patch.object(models.CTCModel, "_batches", lambda self: True):
        for label, lengths in mixes.items():
            audios = [0.1 * rng.standard_normal(int(s * SAMPLE_RATE)) for s in lengths]
            times = [
                min(cpu(lambda n=n, a=audios: model.log_posteriors(a, n)) for _ in range(2))
                for n in sizes
            ]
            print(f"| {label} | " + " | ".join(f"{t:.2f} s" for t in times) + " |")


@dataclass
class Job:
    """One job of the workflow: what it runs, in which variant, and the track file it writes."""

    run: Callable[[], object]
    variant: str = "raw"
    evaluator: str = ""
    writes: tuple[str, Path] | None = None  # (track name, file)


def measure_jobs(data: Corpus, options: dict) -> dict[str, Job]:
    """Every measure's job on the shard; NAD's four."""

    def nad(variant: str, kind: str) -> None:
        evaluator = registry.create("nad", **options["nad"])
        if variant == "fa":
            evaluator = evaluator.trimmed(FixedTrim())
        for item in data.tests:
            score = evaluator.evaluate(replace(item, reference_audios=data.references(item, kind)))
            assert score.status == "ok", score

    jobs = {
        name: Job(
            lambda name=name: evaluate_all(registry.create(name, **options[name]), data.tests)
        )
        for name in MEASURES
    }
    for variant, kind in NAD_JOBS:
        jobs[f"nad {variant}/{kind}"] = Job(lambda v=variant, k=kind: nad(v, k), variant, "nad")
    for name, job in jobs.items():
        job.evaluator = job.evaluator or name
    return jobs


def track_jobs(data: Corpus, options: dict, root: Path) -> dict[str, Job]:
    """One job per model track, variant and set (tests, controls), as the workflow plans them:
    the CTC models' outputs of the tests (raw only), NAD's features of tests and references."""
    planned = tracks.merge_uses(
        use
        for name in (*MEASURES, "nad")
        for use in registry.info(name).cls.track_uses(options[name])
    )
    jobs = {}
    written: dict[tuple[str, str, str], Path] = {}
    # a track's sources first: its job loads their files (the n-gram transcription's ASR)
    for name, use in sorted(planned.items(), key=lambda item: bool(item[1].track.sources)):
        nad = name.startswith("wav2vec2")
        sets = (("tests", data.tests), ("controls", data.controls)) if nad else (("", data.tests),)
        for variant in ("raw", "fa") if nad else ("raw",):
            trimmer = FixedTrim() if variant == "fa" else None
            for label, items in sets:
                path = root / f"{name}.{variant}.{label}.parquet"
                written[(name, variant, label)] = path
                sources = [planned[source].track for source in use.track.sources]
                source_files = [written[(t.name, variant, label)] for t in sources]

                def job(
                    use=use,
                    items=items,
                    trimmer=trimmer,
                    path=path,
                    variant=variant,
                    sources=sources,
                    source_files=source_files,
                ):
                    ids = [item.utt_id for item in items]
                    load_tracks(source_files, sources, ids)
                    audios = [variant_audio(item, trimmer) for item in items]
                    rows = track_rows(use.track, ids, audios, SAMPLE_RATE, use.batch_size)
                    write_track(rows, path, use.track, variant)

                model = Path(dict(use.track.arguments)["model_dir"]).name
                title = f"track {name.split('-')[0]} ({model}) {variant} {label}".strip()
                jobs[title] = Job(job, variant, writes=(name, path))
    return jobs


def dataset_jobs(data: Corpus, options: dict, root: Path) -> None:
    """Section 2: one dataset's jobs without and with track files."""
    consumers = measure_jobs(data, options)
    without: dict[str, float] = {}
    with counted_passes() as passes_without:
        for name, job in consumers.items():
            fresh_job()
            without[name] = cpu(job.run)
    producers = track_jobs(data, options, root)
    written = [job.writes for job in producers.values() if job.writes]
    with_tracks: dict[str, float] = {}
    with counted_passes() as passes_with:
        for name, job in producers.items():
            fresh_job()
            with_tracks[name] = cpu(job.run)
        for name, job in consumers.items():
            fresh_job()
            declared = registry.info(job.evaluator).cls.uses_tracks(options[job.evaluator])
            files = [path for track, path in written if track in declared]
            files = [path for path in files if f".{job.variant}." in path.name]

            def read_and_run(job=job, files=files) -> None:
                load_declared_tracks(job.evaluator, options[job.evaluator], files)
                job.run()

            with_tracks[name] = cpu(read_and_run)
    print("| job | every job runs its models | model outputs as tracks |")
    print("|---|---:|---:|")
    for name in [*producers, *consumers]:
        before = f"{without[name]:.2f}" if name in without else ""
        print(f"| {name} | {before} | {with_tracks[name]:.2f} |")
    print(f"| **total** | **{sum(without.values()):.2f}** | **{sum(with_tracks.values()):.2f}** |")
    for label, passes in (("without", passes_without), ("with", passes_with)):
        print(f"forward passes {label} track files: {dict(passes)}")


def trimming(phone: str, items: Sequence[Item]) -> None:
    """Section 3: the wav2vec2 trimming backend, x real time."""
    audio_s = sum(sf.info(i.audio_path).duration for i in items)
    trimmer = FATrimmer(backend="wav2vec2", wav2vec2_model_dir=phone)
    trimmer.trim(items[0].audio_path, items[0].transcription, "en")
    start = time.perf_counter()
    for item in items:
        trimmer.trim(item.audio_path, item.transcription, item.language)
    print(f"fa_trim wav2vec2: {audio_s / (time.perf_counter() - start):.1f} x real time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speakers", type=int, default=4)
    parser.add_argument("--texts", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        phone = str(build_phone_model(root / "phone", **BASE))
        char = str(build_char_model(root / "char", **BASE))
        lm_path = str(write_arpa(root / "lm.arpa", WORDS))
        data = corpus(root, args.speakers, args.texts, args.seconds)
        audio_s = sum(sf.info(i.audio_path).duration for i in data.tests)
        options = {
            "artp": {"model": phone},
            "artp_old": {"model": phone},
            "dper": {"model": phone},
            "per": {"models": {"en": char}},
            "double_asr": {"models": {"en": char}, "lm": lm_path},
            "artp_double_asr": {"model": phone, "models": {"en": char}, "lm": lm_path},
            "nad": {"model": phone},
        }
        print(f"{len(data.tests)} test and {len(data.controls)} control utterances, ", end="")
        print(f"{audio_s:.1f} s of test audio, {args.threads} torch thread(s)\n")
        batching(phone)
        print()
        dataset_jobs(data, options, root)
        print()
        trimming(phone, data.tests)


if __name__ == "__main__":
    main()
