"""CPU time of the model-based measures on one dataset, with their models' outputs as shared
tracks and without, and why the CPU runs models one utterance at a time.

Run: ``nice python benchmarks/neural.py [--kind flat|peaked] [--size base|large] [--speakers 4]
[--texts 4] [--seconds 3] [--threads 1] [--repeats 1] [--sections 1,2,3] [--calibrate]
[--pathbench DIR]``; with ``--pathbench`` (a PathBench checkout) in the environment of
``neural_conformance.py``, which has PathBench's dependencies (torchaudio) and this package:
``nice /work/venv-pb/bin/python benchmarks/neural.py --pathbench /work/pb --sections 2``.
The models are base-size wav2vec2 CTC models by default (``Wav2Vec2Config`` defaults: 12
layers, 768 dimensions, 95 M parameters; ``--size large``: PathBench's 24 layers and 1,024
dimensions) with the layer-norm feature encoder of PathBench's large models, randomly
initialised (the seeded weights of the PathBench conformance benchmark,
:func:`~pathbench_flow.testing.tiny_models.build_seeded_model`): the compute is the real one,
only the outputs are meaningless. PathBench's own models are large (24 layers, 1024
dimensions, ~3.3x the compute of base). Two kinds of the same models, by default both:
``flat`` as initialised, whose posteriors are near-uniform, and ``peaked``, whose CTC head is
sharpened as a trained model's (mean max posterior 0.7, two thirds of the frames blank, the
conformance benchmark's ``peaked`` kind); the n-gram beam search prunes nothing on the first
and much on the second, so its cost, a large share of the model rows, depends on the kind.
The corpus: ``--texts`` texts said by ``--speakers`` speakers (noise-like audio of
~``--seconds`` s), plus one control recording per text, the reference set.

1. Padded batches against one by one: :meth:`CTCModel.log_posteriors` made to batch (as it
   does on a GPU) on three mixes of lengths, CPU seconds per batch size.
2. The model-measure jobs of one dataset (one shard: the seven measures; NAD with wav2vec2
   features in its four jobs, raw and fa, control and all references): each job's CPU
   seconds, measured in this process with the caches a new job starts without emptied first
   (models, LMs, phonemes, audio, tracks; the ~1.7 s of importing torch and transformers that
   every such job pays is left out). Once with every job running its own models (no track
   files), once as the workflow runs them: one track job per model output, shard and variant,
   then each measure's job reading those files. Forward passes count the utterances that went
   through a network. Per kind; ``--repeats`` takes each job's minimum. Then the model rows'
   share of PathBench's CPU: the "every job runs its models" column stands for PathBench's
   code (``benchmarks/neural_conformance.md`` holds PathBench's own measures to ours run
   each with its own models), without and with the import of torch and transformers where a
   job pays it. With ``--pathbench``, a third column: PathBench's own code on the same
   corpus and models, through ``neural_conformance.py``'s :class:`PathBench` (the evaluators
   its driver builds, called through the driver's dispatch functions) in a scratch directory
   (its :class:`Workspace`: the Hugging Face ids point at this run's models, NAD's
   ``facebook/wav2vec2-large`` at the phone model our NAD reads, ``lms/`` holds the n-gram
   model). One job per measure and per NAD variant (raw, fa), each with its model registry
   emptied first, so it loads its models as a process of its own would; as in the driver, one
   NAD evaluator serves both reference sets (its feature cache spans them). The fa variant's
   trimmer cuts what :class:`FixedTrim` cuts, the forced alignment left out on every side.
3. The wav2vec2 trimming backend, x real time.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field, replace
from io import StringIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import numpy as np
import soundfile as sf
from neural_conformance import PathBench, Workspace, pathbench_evaluator, utterance_case

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.status import ALIGNED
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item, evaluate_all, variant_audio
from pathbench_flow.neural import lm, model_tracks, models, phonemes
from pathbench_flow.stages.score import load_declared_tracks
from pathbench_flow.testing import conformance_inputs, tiny_models
from pathbench_flow.testing.job_imports import run_fresh
from pathbench_flow.tracks.store import load_tracks, track_rows, write_track
from pathbench_flow.trimming.forced_alignment import FATrimmer

PEAKED = {
    "base": {
        "phone": tiny_models.Peak(scale=5.82, blank_bias=1.844),
        "char": tiny_models.Peak(scale=6.46, blank_bias=12.545),
    },
    "large": tiny_models.PEAKS["large"],
}
"""The ``peaked`` kind's peaking of the phone and character models per ``--size``: at base size
:func:`~pathbench_flow.testing.tiny_models.calibrate_peak` of the flat models on this script's
default corpus (``--calibrate`` prints it again; ~1 min of CPU a model, so it is not rerun
each time); at large size the conformance benchmark's, found on espeak-ng speech. The run
prints the shape the models give on its corpus."""
IMPORT_TORCH = "import torch, transformers\ntransformers.Wav2Vec2ForCTC"
"""What a job that runs a network imports: torch, transformers and its wav2vec2 module."""
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


class PathBenchFixedTrim:
    """:class:`FixedTrim` for PathBench's ``TrimmedNADEvaluator``: the same 0.1 s off both
    ends of the audio loaded as PathBench's ``FATrimmer`` loads it, returned as it returns it."""

    def trim(self, audio_path, transcription, language, start_time=0.0, end_time=-1.0):
        import librosa

        duration = end_time - start_time if end_time != -1 else None
        speech, rate = librosa.load(
            audio_path, sr=SAMPLE_RATE, offset=start_time, duration=duration, dtype=np.float64
        )
        return speech[1600:-1600], rate


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
    runs_network: bool = False  # a track job that runs a model imports torch and transformers


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
                # a track computed from another's file (the n-gram transcription) runs no
                # network: pyctcdecode and the vocabulary read from the model's files
                jobs[title] = Job(
                    job, variant, writes=(name, path), runs_network=not use.track.sources
                )
    return jobs


def measure_once(
    data: Corpus, options: dict, root: Path
) -> tuple[dict[str, float], dict[str, float], dict[str, Job], Counter, Counter]:
    """One measurement of one dataset's jobs, without and with track files: CPU s per job."""
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
    return without, with_tracks, producers, passes_without, passes_with


@dataclass
class PathBenchSide:
    """PathBench's code and the scratch directory it runs in (see the module docstring)."""

    code: PathBench
    space: Workspace
    unscored: dict[str, int] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def open_pathbench(checkout: Path, root: Path) -> PathBenchSide:
    """PathBench's modules, imported after its model ids are pointed at ``root``'s offline
    Hugging Face cache (huggingface_hub reads the location once, at import), run from ``root``
    (PathBench reads ``lms/`` from the working directory) with this corpus's n-gram model."""
    checkout = checkout.resolve()
    space = Workspace(root)
    tiny_models.quiet_hf(space.cache)
    root.mkdir(parents=True)
    conformance_inputs.write_lms(root, {"en": WORDS})
    os.chdir(root)
    return PathBenchSide(PathBench(checkout), space)


@dataclass
class PathBenchRun:
    """One measurement of PathBench's jobs: CPU s per job, the CPU s all jobs spent building
    their evaluators (model loads, n-gram decoders), the models each job loaded (its registry's
    keys) and each model's load alone, CPU s."""

    seconds: dict[str, float]
    building: float
    loaded: dict[str, set]
    loads: dict[Any, float]

    def as_driver_runs(self) -> float:
        """The jobs' CPU with each model loaded once, as PathBench's driver loads it in its
        one process (its registry shared by every evaluator), not once per job."""
        per_job = sum(self.loads[key] for keys in self.loaded.values() for key in keys)
        return sum(self.seconds.values()) - per_job + sum(self.loads.values())


def pathbench_once(side: PathBenchSide, data: Corpus) -> PathBenchRun:
    """One measurement of PathBench's jobs on the dataset (see :class:`PathBenchRun`)."""
    pb = side.code
    paths = {item.audio_path: Path(item.audio_path) for item in [*data.tests, *data.controls]}
    jobs: dict[str, tuple[Callable[[], object], tuple[str | None, ...]]] = {
        name: (lambda name=name: pathbench_evaluator(pb, name, "en"), (None,)) for name in MEASURES
    }
    jobs["nad raw (control, all)"] = (lambda: pb.nad.NADEvaluator(), ("control", "all"))
    jobs["nad fa (control, all)"] = (
        lambda: pb.nad.TrimmedNADEvaluator(trimmer=PathBenchFixedTrim()),
        ("control", "all"),
    )
    seconds: dict[str, float] = {}
    building: list[float] = []
    loaded: dict[str, set] = {}
    for name, (build, reference_sets) in jobs.items():
        pb.forget_models()  # a job of its own loads its models
        pb.strings.cached_phonemize.cache_clear()
        results: list[tuple[float | None, str]] = []

        def job(build=build, reference_sets=reference_sets, results=results) -> None:
            evaluator: list = []
            with redirect_stdout(StringIO()):  # the models' load reports
                building.append(cpu(lambda: evaluator.append(build())))
            audio_cache: dict = {}  # the driver's, for the reference-free measures
            for kind in reference_sets:
                for item in data.tests:
                    references = data.references(item, kind) if kind else ()
                    utt = utterance_case(item.utt_id, item.audio_path, item.transcription, "en",
                               references=references)  # fmt: skip
                    results.append(pb.one(evaluator[0], utt, paths, audio_cache))

        seconds[name] = cpu(job)
        loaded[name] = set(pb.registry._ctc_models) | set(pb.registry._feat_models)
        missing = [note for value, note in results if value is None]
        if len(missing) == len(results):
            raise RuntimeError(f"PathBench scored no utterance in job {name}: {missing[-1]!r}")
        side.unscored[name] = len(missing)
        if missing:
            side.notes[name] = missing[-1]
    loads = {}
    for key in sorted(set().union(*loaded.values()), key=str):
        pb.forget_models()
        with redirect_stdout(StringIO()):
            if isinstance(key, str):
                loads[key] = cpu(lambda key=key: pb.registry.get_ctc_model(key))
            else:
                loads[key] = cpu(lambda key=key: pb.registry.get_featurizer(*key))
    pb.forget_models()
    return PathBenchRun(seconds, sum(building), loaded, loads)


def import_cost(repeats: int = 3) -> float:
    """CPU s of importing :data:`IMPORT_TORCH` in a fresh interpreter, above an empty one's
    start (minimum of ``repeats`` each)."""
    empty = min(run_fresh("").cpu_s for _ in range(repeats))
    return min(run_fresh(IMPORT_TORCH).cpu_s for _ in range(repeats)) - empty


def share(ours: float, pathbench: float) -> str:
    ratio = ours / pathbench
    return f"{ours:.2f} / {pathbench:.2f} = {ratio:.3f}; goal <= 0.33: " + (
        "met" if ratio <= 0.33 else "missed"
    )


def dataset_jobs(
    data: Corpus,
    options: dict,
    root: Path,
    repeats: int,
    imports: float,
    side: PathBenchSide | None = None,
) -> None:
    """Section 2: one dataset's jobs without and with track files (each job's minimum over
    ``repeats``), with ``side`` PathBench's own jobs too, and the model rows' share of
    PathBench's CPU."""
    runs, pb_runs = [], []
    for _ in range(repeats):
        runs.append(measure_once(data, options, root))
        if side is not None:
            pb_runs.append(pathbench_once(side, data))
    without = {name: min(run[0][name] for run in runs) for name in runs[0][0]}
    with_tracks = {name: min(run[1][name] for run in runs) for name in runs[0][1]}
    own = (
        {name: min(r.seconds[name] for r in pb_runs) for name in pb_runs[0].seconds} if side else {}
    )
    producers, passes_without, passes_with = runs[0][2:]
    third = " PathBench's own code |" if own else ""
    print("| job | every job runs its models | model outputs as tracks |" + third)
    print("|---|---:|---:|" + ("---:|" if own else ""))
    for name in [*producers, *without, *(name for name in own if name not in without)]:
        before = f"{without[name]:.2f}" if name in without else ""
        after = f"{with_tracks[name]:.2f}" if name in with_tracks else ""
        theirs = (f" {own[name]:.2f} |" if name in own else " |") if own else ""
        print(f"| {name} | {before} | {after} |" + theirs)
    pathbench, ours = sum(without.values()), sum(with_tracks.values())
    theirs = f" **{sum(own.values()):.2f}** |" if own else ""
    print(f"| **total** | **{pathbench:.2f}** | **{ours:.2f}** |" + theirs)
    for label, passes in (("without", passes_without), ("with", passes_with)):
        print(f"forward passes {label} track files: {dict(passes)}")
    networks = sum(job.runs_network for job in producers.values())
    if side is None:
        print(
            "\nThe 'every job runs its models' column stands in for PathBench's CPU: "
            "benchmarks/neural_conformance.md runs PathBench's own code beside ours, each "
            "measure with its own models, at CPU ratio 0.96-1.05 per measure at large size "
            "(NAD 2.28 in our favour, evaluator for evaluator); --pathbench measures "
            "PathBench's own jobs instead."
        )
    else:
        print(
            "\nThe 'every job runs its models' column is our evaluators each running its own "
            "models (the stand-in); PathBench's own code is the third column."
        )
    print(f"model rows / every job runs its models: {share(ours, pathbench)}")
    print(
        f"with one import of torch and transformers ({imports:.2f} CPU s, fresh interpreter) "
        f"per job that pays it: ours {networks} (the track jobs that run a network; the n-gram "
        f"transcription and the measures' jobs read files and import neither), PathBench's "
        f"{len(without)} (one process per measure and dataset, each NAD variant a run of its "
        f"own): {share(ours + networks * imports, pathbench + len(without) * imports)}"
    )
    if side is not None:
        pathbench_ratios(side, own, ours, networks, imports, pb_runs)


def pathbench_ratios(
    side: PathBenchSide,
    own: dict[str, float],
    ours: float,
    networks: int,
    imports: float,
    runs: Sequence[PathBenchRun],
) -> None:
    """The model rows against PathBench's own code: as jobs of their own, and as its driver
    runs a dataset (one process, each model loaded once, one import)."""
    total = sum(own.values())
    ours_paid = ours + networks * imports
    if any(side.unscored.values()):
        print(f"PathBench's unscored utterances per job: {side.unscored}, last notes {side.notes}")
    loads = sum(len(keys) for keys in runs[0].loaded.values())
    print(
        f"\nPathBench's own code: {len(own)} jobs, each loading its models ({loads} loads); "
        f"{min(r.building for r in runs):.2f} s of the {total:.2f} s built the evaluators "
        "(model loads, n-gram decoders); one load alone: "
        + ", ".join(f"{key} {min(r.loads[key] for r in runs):.2f} s" for key in runs[0].loads)
    )
    print(f"model rows / PathBench's own code: {share(ours, total)}")
    print(
        f"with the import where paid (ours {networks}, PathBench's {len(own)}, a process per "
        f"job): {share(ours_paid, total + len(own) * imports)}"
    )
    driver = min(r.as_driver_runs() for r in runs)
    print(
        f"as PathBench's driver runs a dataset (scripts/evaluate_spk2score.py: one process, "
        f"its registry loading each of {len(runs[0].loads)} models once, one import): "
        f"{share(ours, driver)}; with the import where paid: {share(ours_paid, driver + imports)}"
    )


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
    parser.add_argument("--kind", choices=conformance_inputs.KINDS, help="default: both")
    parser.add_argument(
        "--size",
        choices=tuple(PEAKED),
        default="base",
        help="the models' size: base (the goal's benchmark) or large (PathBench's models)",
    )
    parser.add_argument("--speakers", type=int, default=4)
    parser.add_argument("--texts", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1, help="section 2: each job's minimum")
    parser.add_argument("--sections", default="1,2,3")
    parser.add_argument("--calibrate", action="store_true", help="print the peaks for this corpus")
    parser.add_argument(
        "--pathbench", type=Path, metavar="DIR", help="section 2: a PathBench checkout to run too"
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    kinds = (args.kind,) if args.kind else conformance_inputs.KINDS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        side = None  # PathBench's modules import transformers: after its cache is set
        if args.pathbench and "2" in sections:
            side = open_pathbench(args.pathbench, root / "pathbench")
        else:
            tiny_models.quiet_hf()
        import torch
        import transformers

        torch.set_num_threads(args.threads)
        transformers.utils.logging.disable_progress_bar()
        lm_path = str(tiny_models.write_arpa(root / "lm.arpa", WORDS))
        data = corpus(root, args.speakers, args.texts, args.seconds)
        audios = [load_shared(item.audio_path) for item in data.tests]
        audio_s = sum(sf.info(i.audio_path).duration for i in data.tests)
        print(f"{len(data.tests)} test and {len(data.controls)} control utterances, ", end="")
        print(f"{audio_s:.1f} s of test audio, {args.threads} torch thread(s)")
        imports = import_cost() if "2" in sections else 0.0
        for number, kind in enumerate(kinds):
            peaks = PEAKED[args.size] if kind == "peaked" else {"phone": None, "char": None}
            built = conformance_inputs.build_models(root / "models", args.size, kind, peaks)
            phone, char = str(built["phone"]), str(built["char"])
            if side is not None:  # PathBench's NAD encoder: the model ours reads
                side.space.register(args.size, kind, built, built["phone"])
                side.space.activate(args.size, kind)
            print(f"\n## kind {kind}\n")
            for role, directory in built.items():
                shape = tiny_models.posterior_shape(directory, audios)
                print(
                    f"{role} model: mean max posterior {shape['mean_max_posterior']:.3f}, "
                    f"blank frames {shape['blank_fraction']:.3f}, peaking {peaks[role]}"
                )
                if args.calibrate and kind == "flat":
                    print(f"  calibrated: {tiny_models.calibrate_peak(directory, audios)}")
            options = {
                "artp": {"model": phone},
                "artp_old": {"model": phone},
                "dper": {"model": phone},
                "per": {"models": {"en": char}},
                "double_asr": {"models": {"en": char}, "lm": lm_path},
                "artp_double_asr": {"model": phone, "models": {"en": char}, "lm": lm_path},
                "nad": {"model": phone},
            }
            # sections 1 and 3 do not depend on the kind (same compute): run once
            if "1" in sections and number == 0:
                print()
                batching(phone)
            if "2" in sections:
                print()
                (root / kind).mkdir()
                dataset_jobs(data, options, root / kind, args.repeats, imports, side)
            if "3" in sections and number == 0:
                print()
                trimming(phone, data.tests)


if __name__ == "__main__":
    main()
