"""Rehearse "Reproduce PathBench's table" end to end on stand-ins, and time it.

Why: the real reproduction needs seven corpora under licence, 9 GB of models, a 35 GB LM
archive and hours of CPU; nobody can try the path before committing to it. This script walks
the same path a user walks, with every input replaced by something small that has its shape,
so each step (PathBench's metadata, the corpora's own folder layouts, ``pathbench-flow
prepare-pathbench``, the fetch rules, the espeak-ng build and the full ``config/pathbench.yaml``
run) meets the real code, and it records the run's wall and CPU time:

1. PathBench's ``datasets/`` folder (``--pathbench-datasets``; default the repository's cut,
   ``tests/fixtures/kaldi-metadata``, which holds COPAS, EasyCall, NeuroVoz, TORGO and UASpeech)
   cut to the utterances ``pathbench_flow/testing/pathbench_shapes.py`` selects per column,
   every metadata file kept and cut to their lines (``tests/fixtures/cut_kaldi_metadata.py``'s
   rule). MDSC and YouTube, which the fixtures lack, are built in their shape.
2. espeak-ng speech (``pathbench_shapes``'s voices and degradation) laid out at the paths
   PathBench's ``wav.scp`` files name, below each corpus's own root folder, under one root per
   corpus (``<work>/corpora/<corpus>/...``). COPAS's word sets are words cut from longer
   recordings: its ``segments`` are the synthesised words' spans, since PathBench's times
   belong to its recordings, not to these.
3. ``pathbench-flow prepare-pathbench`` repoints the cut at those roots and checks the audio
   against PathBench's ``wav_hash.scp``: espeak-ng is never PathBench's audio, so the five cut
   corpora come out "different" and the run sets :data:`ACCEPT_KEY`.
4. One local server on 127.0.0.1 (``pathbench_flow/testing/hub_standin.py``) stands in for the
   Hugging Face hub (tiny models of ``tiny_models.py`` for PathBench's seven checkpoints), for
   Zenodo (an ``lms.zip`` of tiny ARPA models, read by HTTP ``Range``) and for GitHub's
   espeak-ng archive (Debian's 1.52.0 source, as ``.ci/run`` fetches it with apt); a lock
   (config ``fetch.lock``) pins what it serves.
5. ``snakemake --cores 2 --configfile config/pathbench.yaml --config datasets_root=<out>`` in a
   copy of the workflow, to the end; then every cell PathBench publishes is checked in
   ``results/pathbench_table.csv`` (250 of 252: YouTube has no reference audio, so no P-ESTOI
   or NAD) and ``results/pathbench_published_vs_measured.csv`` is checked complete. The values
   mean nothing: the models are random and the speech is espeak-ng.

Run: ``python benchmarks/rehearse_pathbench.py --work /tmp/rehearsal`` (``--keep`` keeps the
corpora, fetched files and workflow copy; without it only ``results/`` stays). The timing is
written to ``<work>/workflow/results/rehearsal.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any

import pandas as pd
import soundfile as sf
import yaml

from pathbench_flow import fetching
from pathbench_flow.evaluators.neural import ASR_DEFAULT
from pathbench_flow.reporting.results_table import PATHBENCH_COLUMNS, PATHBENCH_ROWS
from pathbench_flow.testing import FIXTURES, KALDI_METADATA, REPO
from pathbench_flow.testing.hub_standin import HubStandIn, Repo
from pathbench_flow.testing.pathbench_shapes import (
    Plan,
    Pool,
    corpus_tasks,
    cut_task,
    mdsc_plans,
    read_kaldi,
    write_plan,
    youtube_plan,
)
from pathbench_flow.testing.tiny_models import Peak
from pathbench_flow.testing.workflow_run import LOCAL_RUN, copy_workflow, full_log

CORPUS_FOLDERS = {
    "uaspeech": "UASpeech",
    "torgo": "TORGO",
    "neurovoz": "neurovoz_v3",
    "easycall": "EasyCall",
    "copas": "COPAS_1.0.1",
    "mdsc": "myairbridge-MDSC",
    "youtube": "spon_youtube_clean",
}
"""Each corpus's own root folder as PathBench's ``wav.scp`` paths name it (the last folder of
that name: UASpeech's paths hold ``UASpeech/UASpeech/audio/...``). A user's copy of the corpus
is that folder; what lies below it in the paths is laid out below the rehearsal's root."""
SHAPED = ("mdsc", "youtube")
"""Corpora not in the fixtures, built in their shape by ``pathbench_shapes``."""
ACCEPT_KEY = "accept_audio_differences"
"""The config key (workflow/schemas/config.schema.yaml) with which the run reports columns
whose audio differs from PathBench's instead of refusing them."""
COMMIT = "3" * 40
"""The commit every stand-in model repository is at (the stand-in lock pins it)."""
WEIGHTS = "model.safetensors"
ARCHIVE = "lms.zip"
ESPEAK_ARCHIVE = "espeak-ng.tar.gz"
PHONE_PEAK = Peak(scale=1.0, blank_bias=-0.5)
"""The stand-in phone model's head: random, its blank's bias lowered below the phones'
(:func:`served_files` says why)."""
LM_WORDS = ["the", "cat", "sat", "a", "dog", "ran", "de", "la", "il", "het", "el"]
ESPEAK_SOURCE_VARIABLE = "PATHBENCH_ESPEAK_SOURCE"
ESPEAK_CACHE = Path.home() / ".cache" / "pathbench-flow" / "espeak-ng-source"
TRIXIE_SOURCES = (
    "Types: deb-src",
    "URIs: http://deb.debian.org/debian",
    "Suites: trixie",
    "Components: main",
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
)
"""A deb-src entry of Debian trixie, whose espeak-ng is 1.52.0 (what ``.ci/run`` uses)."""
EXPECTED_EMPTY = {("P-ESTOI", "YT Sentence Full"), ("NAD", "YT Sentence Full")}
"""The published cells a run cannot fill: YouTube has no reference audio."""


def log(message: str) -> None:
    """Progress on stderr, flushed, so a long run shows where it is."""
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- 1-2: inputs
def fixture_cutter() -> ModuleType:
    """``tests/fixtures/cut_kaldi_metadata.py``, whose ``cut_directory`` cuts a dataset folder
    to some utterances keeping every file, as the fixtures were cut."""
    path = FIXTURES / "cut_kaldi_metadata.py"
    spec = importlib.util.spec_from_file_location("cut_kaldi_metadata", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def below_root(corpus: str, foreign: str) -> PurePosixPath:
    """The part of a PathBench path below the corpus's own root folder (:data:`CORPUS_FOLDERS`)."""
    parts = PurePosixPath(foreign).parts
    folder = CORPUS_FOLDERS[corpus]
    if folder not in parts:
        raise ValueError(f"{foreign}: no {folder}/ folder, {corpus}'s root in PathBench's paths")
    at = len(parts) - 1 - parts[::-1].index(folder)
    return PurePosixPath(*parts[at + 1 :])


@dataclass(frozen=True)
class Inputs:
    """What steps 1-2 made: the cut metadata, each corpus's root, and their size."""

    pathbench_datasets: Path
    corpora: dict[str, Path]
    utterances: dict[str, int]
    n_recordings: int
    audio_seconds: float


def relative_folder(plan: Plan, root: Path) -> Path:
    return plan.folder.relative_to(root)


def build_inputs(source: Path, work: Path) -> Inputs:
    """The cut of ``source`` (PathBench's datasets folder) and espeak-ng audio at its paths.

    The speech and the selection are ``pathbench_shapes``'s (its plans name, per dataset
    folder, the utterances kept and a recording per ``wav.scp`` path); ``source`` gives the
    metadata, which must hold those utterances (the fixtures and PathBench's full folder do).
    """
    scratch = work / "shapes"
    shutil.rmtree(scratch, ignore_errors=True)
    pool = Pool(scratch / "audio")
    root = scratch / "datasets"
    cut_plans: list[Plan] = []
    for (corpus, task), conditions in corpus_tasks().items():
        cut_plans += cut_task(pool, root, corpus, task, conditions)
    shaped_plans = [*mdsc_plans(pool, root), youtube_plan(pool, root)]
    log(f"synthesising {len(pool.recordings)} recordings with espeak-ng")
    pool.synthesise()
    for plan in cut_plans + shaped_plans:
        write_plan(plan)  # the synthesised spans as segments, and the shaped corpora's files

    cut = work / "pathbench-datasets"
    shutil.rmtree(cut, ignore_errors=True)
    cutter = fixture_cutter()
    for plan in cut_plans:
        relative = relative_folder(plan, root)
        kept = set(read_kaldi(plan.folder / "utt2spk"))
        absent = kept - set(read_kaldi(source / relative / "utt2spk"))
        if absent:
            raise SystemExit(f"{source / relative}: lacks {sorted(absent)[:3]}...: not PathBench's")
        cutter.cut_directory(source / relative, cut / relative, kept)
        if plan.segments:  # PathBench's times are of its recordings; these are the stand-in's
            shutil.copyfile(plan.folder / "segments", cut / relative / "segments")
    for readme in sorted(source.glob("*/README.md")):
        shutil.copyfile(readme, cut / readme.relative_to(source))
    for corpus in SHAPED:
        if (source / corpus).is_dir():
            log(f"{source / corpus}: not cut (pathbench_shapes cannot); built in its shape")
    for plan in shaped_plans:  # written with local paths: given PathBench-like ones back
        target = cut / relative_folder(plan, root)
        shutil.copytree(plan.folder, target)
        lines = read_kaldi(plan.folder / "wav.scp")
        foreign = {
            k: "/" + Path(p).relative_to(pool.audio_root).as_posix() for k, p in lines.items()
        }
        (target / "wav.scp").write_text("".join(f"{k} {p}\n" for k, p in foreign.items()))

    corpora = {corpus: work / "corpora" / corpus for corpus in CORPUS_FOLDERS}
    shutil.rmtree(work / "corpora", ignore_errors=True)
    seconds = 0.0
    for plan in cut_plans + shaped_plans:
        corpus = relative_folder(plan, root).parts[0]
        for recording in plan.recordings.values():
            if not recording.path.is_file():
                continue  # moved already: two conditions share the real corpus's file
            seconds += sf.info(recording.path).duration
            foreign = "/" + recording.path.relative_to(pool.audio_root).as_posix()
            target = corpora[corpus] / below_root(corpus, foreign)
            target.parent.mkdir(parents=True, exist_ok=True)
            recording.path.replace(target)
    utterances = {
        scp.parent.relative_to(cut).as_posix(): len(read_kaldi(scp.parent / "utt2spk"))
        for scp in sorted(cut.rglob("wav.scp"))
    }
    shutil.rmtree(scratch)
    return Inputs(cut, corpora, utterances, len(pool.recordings), seconds)


# ----------------------------------------------------------------------------- 3: prepare
def prepare(inputs: Inputs, out: Path) -> dict[str, Any]:
    """``pathbench-flow prepare-pathbench`` on the cut and the corpus roots; its audio check."""
    shutil.rmtree(out, ignore_errors=True)
    command = [str(Path(sys.executable).with_name("pathbench-flow")), "prepare-pathbench"]
    command += ["--pathbench-datasets", str(inputs.pathbench_datasets), "--out", str(out)]
    for name, root in inputs.corpora.items():
        command += ["--corpus", f"{name}={root}"]
    done = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"prepare-pathbench failed ({done.returncode}): {' '.join(command)}")
    return json.loads((out / "pathbench_audio_check.json").read_text())


# ----------------------------------------------------------------------------- 4: stand-ins
def espeak_source(cache: Path = ESPEAK_CACHE) -> Path:
    """Debian's espeak-ng 1.52.0 orig tarball: ``$PATHBENCH_ESPEAK_SOURCE``, else the one in
    ``cache``, else downloaded there by apt as ``.ci/run`` does (a trixie deb-src entry of its
    own, lists of its own, so the system's apt configuration is not touched)."""
    named = os.environ.get(ESPEAK_SOURCE_VARIABLE)
    if named and Path(named).is_file():
        return Path(named)
    found = sorted(cache.glob("espeak-ng_1.52.0*.orig.tar.*"))
    if not found:
        (cache / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        sources = cache / "trixie-src.sources"
        sources.write_text("\n".join(TRIXIE_SOURCES) + "\n")
        options = ["-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null"]
        options += ["-o", f"Dir::State::Lists={cache / 'lists'}"]
        log(f"downloading espeak-ng's Debian source into {cache}")
        subprocess.run(["apt-get", "-qq", *options, "update"], check=True)
        subprocess.run(
            ["apt-get", "-qq", *options, "source", "--download-only", "espeak-ng"],
            cwd=cache,
            check=True,
        )
        found = sorted(cache.glob("espeak-ng_1.52.0*.orig.tar.*"))
    if not found:
        raise SystemExit(f"no espeak-ng_1.52.0 orig tarball in {cache}")
    return found[0]


def lm_members(shipped: Mapping[str, Any]) -> list[str]:
    """The archive members the lock's LMs are read from: each LM's ``member`` (a lock naming
    members) or its ``path`` (a lock naming the path PathBench opens, whose file the fetch
    takes from the member of the same name)."""
    return sorted(
        {lm.get("member") or lm["path"] for lm in shipped["lms"] if lm.get("default", True)}
    )


def served_files(work: Path, shipped: Mapping[str, Any]) -> tuple[dict[str, Path], dict[str, Path]]:
    """(hub id → tiny model directory, file name → file): a phone model for the phone model
    and NAD's encoder, a character model for the five ASR models; an ``lms.zip`` of tiny ARPA
    models at the members the lock names; Debian's espeak-ng source.

    The phone model's blank is lowered (:data:`PHONE_PEAK`), for two of the table's rows:
    a random model whose blank wins every frame decodes nothing, which gives every utterance
    the same phone error rate and leaves PER (Phone) without an r (the first run); one whose
    blank wins most frames, as a trained model's does (``tiny_models.PEAKS``), aligns a
    one-phone word to two frames (40 ms), and UASpeech's MC cut holds only 'a' and 'I', so no
    speaker kept an FA-trimmed value long enough for Praat or CPP (the second run: 11 cells
    empty). With the blank below the phones, the greedy decode is phones on nearly every
    frame and the forced alignment holds each phone over the frames around it, so both rows
    fill; the values mean nothing either way."""
    from pathbench_flow.testing.tiny_models import (
        PHONES,
        build_char_model,
        build_seeded_model,
        write_arpa,
    )

    root = work / "served"
    shutil.rmtree(root, ignore_errors=True)
    phone = build_seeded_model(root / "phone", PHONES, seed=0, peak=PHONE_PEAK, phones=True)
    char = build_char_model(root / "char", processor=True)
    asr = set(ASR_DEFAULT.values())
    models = {m["id"]: char if m["id"] in asr else phone for m in shipped["models"]}
    archive = root / ARCHIVE
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as opened:
        for member in lm_members(shipped):
            (root / "arpa" / member).parent.mkdir(parents=True, exist_ok=True)
            opened.write(write_arpa(root / "arpa" / member, LM_WORDS), member)
    espeak = root / ESPEAK_ARCHIVE
    shutil.copyfile(espeak_source(), espeak)
    return models, {ARCHIVE: archive, ESPEAK_ARCHIVE: espeak}


def digest(path: Path, algorithm: str = "sha256") -> str:
    return hashlib.new(algorithm, path.read_bytes()).hexdigest()


def standin_lock(
    shipped: Mapping[str, Any], endpoint: str, models: Mapping[str, Path], archive: Path
) -> dict[str, Any]:
    """The shipped lock with each entry pinned to what the stand-in serves: models at
    :data:`COMMIT` with their weights' digest, the archive at its URL with its MD5 and size,
    and each LM member's digests (as a lock listing members or as one listing LMs)."""
    pinned = {"pinned": fetching.PUBLIC_RECORD}
    locked_models = [
        entry
        | {"revision": COMMIT, "weights": WEIGHTS, "sha256": digest(models[entry["id"]] / WEIGHTS)}
        | pinned
        for entry in shipped["models"]
    ]
    with zipfile.ZipFile(archive) as opened:
        infos = {info.filename: info for info in opened.infolist()}
        sha = {name: hashlib.sha256(opened.read(name)).hexdigest() for name in infos}
    members = [
        {
            "name": name,
            "size": info.file_size,
            "compressed_size": info.compress_size,
            "crc32": f"{info.CRC:08x}",
            "sha256": sha[name],
        }
        | pinned
        for name, info in sorted(infos.items())
    ]
    (shipped_archive,) = shipped["archives"]
    locked_archive = shipped_archive | {
        "url": f"{endpoint}/files/{ARCHIVE}",
        "md5": digest(archive, "md5"),
        "size": archive.stat().st_size,
    }
    if "members" in shipped_archive:
        locked_archive["members"] = members
    lms = [
        lm | ({"sha256": sha[lm["member"]]} | pinned if "member" in lm else {})
        for lm in shipped["lms"]
        if lm.get("default", True)
    ]
    return dict(shipped) | {"models": locked_models, "lms": lms, "archives": [locked_archive]}


# ----------------------------------------------------------------------------- 5: the run
@dataclass(frozen=True)
class Run:
    """The workflow run: its return code, wall and CPU seconds of its process tree, jobs."""

    returncode: int
    wall_s: float
    user_s: float
    system_s: float
    jobs: dict[str, int]


def rule_counts(workdir: Path) -> dict[str, int]:
    """Jobs per rule of the run (its full log's ``rule x:`` and ``localrule x:`` lines)."""
    counts: dict[str, int] = {}
    for line in full_log(workdir).splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in ("rule", "localrule") and words[1].endswith(":"):
            counts[words[1][:-1]] = counts.get(words[1][:-1], 0) + 1
    return dict(sorted(counts.items()))


def run_workflow(workdir: Path, datasets_root: Path, cores: int, extra: Sequence[str]) -> Run:
    """``snakemake`` with PathBench's config and the rehearsal's, niced, to the end; the CPU
    time is that of every process it waited for (``RUSAGE_CHILDREN``, before and after)."""
    command = ["nice", "-n", "10", sys.executable, "-m", "snakemake", "--cores", str(cores)]
    command += ["--configfile", "config/pathbench.yaml", "rehearsal.yaml"]
    command += ["--config", f"datasets_root={datasets_root}", *extra]
    log(" ".join(command))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with (workdir / "rehearsal.log").open("w") as output:
        done = subprocess.run(
            command,
            cwd=workdir,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=os.environ | LOCAL_RUN,
        )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Run(
        done.returncode,
        wall,
        after.ru_utime - before.ru_utime,
        after.ru_stime - before.ru_stime,
        rule_counts(workdir),
    )


def table_cells(results: Path) -> dict[str, Any]:
    """PathBench's 12 x 21 published cells in ``pathbench_table.csv``: how many are filled,
    and which are empty."""
    table = pd.read_csv(results / "pathbench_table.csv", keep_default_na=False, dtype=str)
    rows = table.set_index("Metric")
    labels = [" ".join(column) for column in PATHBENCH_COLUMNS]
    empty = [
        (name, label)
        for _, name, _ in PATHBENCH_ROWS
        for label in labels
        if name not in rows.index or rows.at[name, label] == ""
    ]
    total = len(PATHBENCH_ROWS) * len(labels)
    return {"cells": total, "filled": total - len(empty), "empty": [list(cell) for cell in empty]}


def comparison_complete(results: Path) -> dict[str, Any]:
    """Whether ``pathbench_published_vs_measured.csv`` has a line per published cell, each
    with a difference or a reason."""
    compared = pd.read_csv(results / "pathbench_published_vs_measured.csv", keep_default_na=False)
    labels = {" ".join(column) for column in PATHBENCH_COLUMNS}
    names = {name for _, name, _ in PATHBENCH_ROWS}
    lines = compared[compared["row"].isin(names) & compared["column"].isin(labels)]
    have = set(zip(lines["row"], lines["column"], strict=True))
    missing = sorted((n, c) for n in names for c in labels if (n, c) not in have)
    unexplained = lines[(lines["difference"] == "") & (lines["reason"] == "")]
    with_difference = int((lines["difference"] != "").sum())
    return {
        "lines": len(lines),
        "with_difference": with_difference,
        "missing": [list(cell) for cell in missing],
        "unexplained": len(unexplained),
        "complete": not missing and unexplained.empty,
    }


def accept_key_known(workdir: Path) -> bool:
    """Whether the workflow copy's config schema has :data:`ACCEPT_KEY` (the schema refuses
    unknown keys, so a workflow without it must not be given it)."""
    schema = yaml.safe_load((workdir / "workflow/schemas/config.schema.yaml").read_text())
    return ACCEPT_KEY in schema["properties"]


# ----------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (replaced)")
    parser.add_argument(
        "--pathbench-datasets",
        type=Path,
        default=KALDI_METADATA,
        help="PathBench's datasets/ folder (default: the repository's cut of it)",
    )
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep everything, not only results")
    parser.add_argument(
        "snakemake_args", nargs="*", help="more snakemake arguments, after --, e.g. -- -n"
    )
    args = parser.parse_args(argv)
    work = args.work.resolve()
    if work == REPO or REPO in work.parents:
        raise SystemExit(f"{work}: inside the repository; the rehearsal writes outside it")
    work.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"pathbench_datasets": str(args.pathbench_datasets), "steps_s": {}}

    started = time.monotonic()
    inputs = build_inputs(args.pathbench_datasets.resolve(), work)
    record["steps_s"]["cut_and_synthesise"] = round(time.monotonic() - started, 1)
    record |= {
        "recordings": inputs.n_recordings,
        "audio_s": round(inputs.audio_seconds, 1),
        "utterances": inputs.utterances,
    }
    log(f"{inputs.n_recordings} recordings, {inputs.audio_seconds:.0f} s of audio")

    started = time.monotonic()
    datasets_root = work / "datasets"
    check = prepare(inputs, datasets_root)
    record["steps_s"]["prepare"] = round(time.monotonic() - started, 1)
    record["audio_check"] = {
        name: {
            k: v for k, v in entry.items() if k in ("recordings", "matched", "different", "missing")
        }
        for name, entry in check["corpora"].items()
    }

    started = time.monotonic()
    shipped = fetching.lock()
    models, files = served_files(work, shipped)
    standin = HubStandIn(
        repos={hub_id: Repo(COMMIT, path) for hub_id, path in models.items()}, files=files
    ).start()
    record["steps_s"]["stand_ins"] = round(time.monotonic() - started, 1)
    workdir = copy_workflow(work / "workflow")
    shutil.rmtree(workdir / "results", ignore_errors=True)
    lock_path = workdir / "stand-in.lock.json"
    lock_path.write_text(
        json.dumps(standin_lock(shipped, standin.endpoint, models, files[ARCHIVE]))
    )
    config: dict[str, Any] = {
        "fetch": {
            "enabled": True,
            "lock": lock_path.name,
            "espeak_ng": {"url": f"{standin.endpoint}/files/{ESPEAK_ARCHIVE}"},
        }
    }
    differs = any(entry["different"] or entry["missing"] for entry in check["corpora"].values())
    if differs and accept_key_known(workdir):
        config[ACCEPT_KEY] = True
    elif differs:
        log(f"the workflow has no {ACCEPT_KEY}: run without it")
    (workdir / "rehearsal.yaml").write_text(yaml.safe_dump(config))
    os.environ |= {"HF_ENDPOINT": standin.endpoint, "HF_HOME": str(work / "hf_home")}
    try:
        run = run_workflow(workdir, datasets_root, args.cores, args.snakemake_args)
    finally:
        standin.stop()
    record["run"] = {
        "returncode": run.returncode,
        "wall_s": round(run.wall_s, 1),
        "cpu_s": round(run.user_s + run.system_s, 1),
        "user_s": round(run.user_s, 1),
        "system_s": round(run.system_s, 1),
        "cores": args.cores,
        "jobs": sum(run.jobs.values()),
        "jobs_per_rule": run.jobs,
        "load_average_after": os.getloadavg(),
        "requests_served": len(standin.requests),
        "range_requests": sum(1 for *_, wanted in standin.requests if wanted),
    }
    results = workdir / "results"
    ok = run.returncode == 0
    if ok:
        record["pathbench_table"] = table_cells(results)
        record["published_vs_measured"] = comparison_complete(results)
        cells = record["pathbench_table"]
        ok = {tuple(cell) for cell in cells["empty"]} == EXPECTED_EMPTY
        ok = ok and record["published_vs_measured"]["complete"]
    else:
        log(f"snakemake failed ({run.returncode}): see {workdir / 'rehearsal.log'}")
    results.mkdir(parents=True, exist_ok=True)
    (results / "rehearsal.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "utterances"}, indent=2))
    if not args.keep:
        for name in ("corpora", "served", "hf_home", "datasets", "pathbench-datasets"):
            shutil.rmtree(work / name, ignore_errors=True)
        for path in workdir.iterdir():
            if path.name not in ("results", "rehearsal.log"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
