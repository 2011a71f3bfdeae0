"""PathBench's ``datasets/`` folder repointed at this machine's corpora, and its audio checked.

PathBench (github.com/karkirowle/pathbench at e26aa32) publishes the Kaldi metadata of its 21
columns, but each ``wav.scp`` names its authors' disks (``/data/group1/z40484r/datasets/
COPAS_1.0.1/...``, ``/nas02/homes/.../UASpeech/UASpeech/audio/noisereduce/...``), and beside it
a ``wav_hash.scp`` (``<recording-id> <sha256>``, the ids of ``wav.scp``) of the audio it used.
:func:`prepare` copies that folder, rewrites every ``wav.scp`` path onto the user's copy of its
corpus, and compares each recording with PathBench's digest, so a run can say per column
whether its audio is PathBench's (:func:`column_status`).

How a foreign path finds its local file (:class:`CorpusRoot`): every directory PathBench's
paths name is mapped to the longest of its trailing parts that is a directory under the
user's root (``EasyCall/f01/Sessione_01`` or ``f01/Sessione_01`` for a root holding
``EasyCall`` or being it); a directory with no such part (a speaker missing from the copy)
strips the foreign prefix most directories of the corpus stripped, and a corpus none of whose
directories is found strips the directory all its paths share, so its files are looked for
directly under the root. ``segments`` names recording ids, so only ``wav.scp`` changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pathbench_flow.common.io import atomic_path, write_json, write_text
from pathbench_flow.data.overlap import read_hashes

CHECK_FILE = "pathbench_audio_check.json"
"""The check :func:`prepare` writes into the new datasets root, and the reporting reads."""
PATHBENCH_COMMIT = "e26aa32"
OUTCOMES = ("matched", "different", "missing", "unhashed", "not_given")
"""What one recording is: its bytes have PathBench's SHA-256 or not, it is absent, it was not
hashed (``--no-hash``, or no digest listed), or its corpus was not given (no root)."""
VERIFIED, DIFFERS, UNCHECKED = "verified", "differs", "unchecked"
"""A column's ``pathbench_audio``: every recording matched; some differ or are missing; not
known (no check, or recordings present but not hashed)."""
EXAMPLES = 3
HASH_CHUNK = 1 << 20

_DIFFERENT_AUDIO = {
    "uaspeech": (
        "not the noise-reduced audio PathBench used (UASpeech/audio/noisereduce/<speaker>/, "
        "the denoised release of December 2020; PathBench's README: 'If you have the "
        "pre-denoising audio your hashes will not match')"
    ),
}
"""The known reason a corpus's copies differ from PathBench's, where PathBench names one."""


def _normal_name(name: str) -> str:
    """A file name without case or whitespace: EasyCall's ``m13 _01_Apri.wav`` is the
    ``m13_01_Apri.wav`` PathBench renamed it to (its README's EasyCall fix)."""
    return "".join(unicodedata.normalize("NFC", name).casefold().split())


class CorpusRoot:
    """Where the files PathBench's paths of one corpus name are under the user's ``root``
    (the rule is the module's); each foreign directory is looked up once."""

    def __init__(self, root: Path, foreign_paths: Iterable[str]) -> None:
        self.root = Path(os.path.abspath(root))
        folders = sorted({PurePosixPath(p).parent for p in foreign_paths})
        found = {d: self._found_prefix(d) for d in folders}
        counts = Counter(p for p in found.values() if p is not None)
        shared = PurePosixPath(os.path.commonpath([str(d) for d in folders])) if folders else None
        usual = counts.most_common(1)[0][0] if counts else shared
        self.found = any(p is not None for p in found.values())
        self._prefix = {
            d: p if p is not None else (usual if d.is_relative_to(usual) else shared)
            for d, p in found.items()
        }
        self._listings: dict[Path, dict[str, str]] = {}

    def _found_prefix(self, folder: PurePosixPath) -> PurePosixPath | None:
        """The foreign prefix whose removal leaves the longest existing folder under root."""
        for cut in range(1, len(folder.parts)):
            prefix = PurePosixPath(*folder.parts[:cut])
            if (self.root / folder.relative_to(prefix)).is_dir():
                return prefix
        return None

    def local(self, foreign: str) -> Path:
        """The local path of a foreign ``wav.scp`` path."""
        path = PurePosixPath(foreign)
        return self.root / path.relative_to(self._prefix[path.parent])

    def renamed(self, missing: Path) -> Path | None:
        """A file beside ``missing`` whose name differs from it in case or spaces only."""
        if missing.parent not in self._listings:
            names = os.listdir(missing.parent) if missing.parent.is_dir() else []
            self._listings[missing.parent] = {_normal_name(n): n for n in sorted(names)}
        name = self._listings[missing.parent].get(_normal_name(missing.name))
        return missing.parent / name if name else None


@dataclass(frozen=True)
class Recording:
    """One ``wav.scp`` line: the dataset directory (relative, POSIX), the recording id, its
    foreign and local paths (local None when the corpus was not given) and PathBench's
    digest (empty when ``wav_hash.scp`` lists none)."""

    dataset: str
    key: str
    foreign: str
    local: Path | None
    expected: str


def wav_scp_lines(path: Path) -> list[tuple[str, str] | str]:
    """Each line of a ``wav.scp``: ``(id, path)``, or the line itself when it has no path
    (blank), so a rewrite keeps every other line as it was."""
    lines: list[tuple[str, str] | str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split(maxsplit=1)
        lines.append((parts[0], parts[1].strip()) if len(parts) == 2 else line)
    return lines


def corpus_of(dataset: str) -> str:
    """The corpus of a dataset directory relative to the datasets root (its first part)."""
    return PurePosixPath(dataset).parts[0]


def _copy(source: Path, target: Path) -> None:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)


def repoint(pathbench: Path, out: Path, roots: Mapping[str, CorpusRoot | None]) -> list[Recording]:
    """Copy PathBench's datasets folder ``pathbench`` to ``out``, every ``wav.scp`` path
    rewritten with its corpus's :class:`CorpusRoot` (unchanged for a corpus without one);
    return every recording of every dataset directory."""
    recordings = []
    for source in sorted(p for p in pathbench.rglob("*") if p.is_file()):
        relative = source.relative_to(pathbench)
        if source.name != "wav.scp":
            _copy(source, out / relative)
            continue
        dataset = relative.parent.as_posix()
        root = roots.get(corpus_of(dataset))
        expected = read_hashes(source.parent)
        lines = wav_scp_lines(source)
        text = []
        for line in lines:
            if isinstance(line, str):
                text.append(line)
                continue
            key, foreign = line
            local = root.local(foreign) if root else None
            text.append(f"{key} {local if local else foreign}")
            recordings.append(Recording(dataset, key, foreign, local, expected.get(key, "")))
        write_text("".join(f"{line}\n" for line in text), out / relative)
    return recordings


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks (a corpus's recordings can be long)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def digests_of(paths: Iterable[Path], threads: int) -> dict[Path, str]:
    """Each distinct existing file's SHA-256, hashed once, ``threads`` at a time (hashlib
    releases the GIL, and reading is I/O)."""
    unique = sorted(set(paths))
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return dict(zip(unique, pool.map(sha256_of, unique), strict=True))


def outcome(recording: Recording, present: set[Path], digests: Mapping[Path, str]) -> str:
    """The recording's :data:`OUTCOMES` entry."""
    if recording.local is None:
        return "not_given"
    if recording.local not in present:
        return "missing"
    if recording.local not in digests or not recording.expected:
        return "unhashed"
    return "matched" if digests[recording.local] == recording.expected.lower() else "different"


@dataclass
class Tally:
    """How many recordings had each outcome, with a few examples of the bad ones."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, result: str, example: str) -> None:
        self.counts[result] += 1
        if result in ("missing", "different"):
            shown = self.examples.setdefault(result, [])
            if len(shown) < EXAMPLES:
                shown.append(example)

    def as_dict(self) -> dict[str, Any]:
        return {
            "recordings": sum(self.counts.values()),
            **{name: self.counts[name] for name in OUTCOMES},
            "examples": self.examples,
        }


def dataset_status(datasets: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> str:
    """The ``pathbench_audio`` of a column whose recordings are the dataset directories
    ``names`` (its test set and reference set), from a check's per-directory counts: any
    recording missing or different makes it :data:`DIFFERS`; every one matched,
    :data:`VERIFIED`; else (a directory the check lacks, recordings not hashed or not
    given) :data:`UNCHECKED`."""
    if not names or any(name not in datasets for name in names):
        return UNCHECKED
    counts = [datasets[name] for name in names]
    if any(c["missing"] or c["different"] for c in counts):
        return DIFFERS
    if all(c["matched"] == c["recordings"] for c in counts):
        return VERIFIED
    return UNCHECKED


def audio_statuses(
    check_file: str | Path | None, dataset_dirs: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """The ``pathbench_audio`` of each dataset (name -> its test and reference directories)
    from :data:`CHECK_FILE` (its directories are relative to the file's folder, the datasets
    root); all :data:`UNCHECKED` when there is no such file."""
    if check_file is None or not Path(check_file).is_file():
        return dict.fromkeys(dataset_dirs, UNCHECKED)
    root = Path(check_file).parent.absolute()
    checked = json.loads(Path(check_file).read_text(encoding="utf-8"))["datasets"]
    return {
        name: dataset_status(
            checked, [Path(os.path.relpath(Path(d).absolute(), root)).as_posix() for d in dirs]
        )
        for name, dirs in dataset_dirs.items()
    }


def refuse_differing_audio(statuses: Mapping[str, str], check_file: str | Path | None) -> None:
    """Raise a ``ValueError`` naming the columns (label -> ``pathbench_audio``) whose audio
    differs from PathBench's: reported beside PathBench's r they would pass as its
    reproduction. The config's ``accept_audio_differences`` skips this call."""
    if differing := sorted(label for label, status in statuses.items() if status == DIFFERS):
        raise ValueError(
            f"the audio of PathBench's column(s) {', '.join(differing)} is not PathBench's "
            f"(recordings missing or different; see {check_file}): give pathbench-flow "
            "prepare-pathbench the corpus copies PathBench used and run it again, or set "
            "accept_audio_differences: true in the config to report these columns anyway, "
            "marked 'differs' in pathbench_table.csv"
        )


def pathbench_columns(datasets: Iterable[str]) -> dict[str, list[str]]:
    """PathBench's columns among the dataset directories: each pathological set with its
    control set (its reference set in ``config/pathbench.yaml``), and a corpus folder that is
    itself a dataset (YouTube) alone."""
    names = set(datasets)
    columns = {}
    for name in sorted(names):
        parts = PurePosixPath(name).parts
        if len(parts) == 1:
            columns[name] = [name]
        elif len(parts) == 4 and parts[1] == "pathological":
            control = PurePosixPath(parts[0], "control", *parts[2:]).as_posix()
            columns[name] = [name, control] if control in names else [name]
    return columns


def cause(
    name: str, tally: Tally, root: CorpusRoot | None, renamed: Sequence[tuple[Path, Path]]
) -> str:
    """Why corpus ``name``'s audio is not PathBench's, in words; empty when it is.

    ``renamed`` pairs each missing file with the file beside it that differs only in case or
    spaces (:meth:`CorpusRoot.renamed`).
    """
    counts, total = tally.counts, sum(tally.counts.values())
    if root is None:
        return "corpus not given (--corpus NAME=ROOT): its wav.scp paths are PathBench's own"
    reasons = []
    if renamed:
        old, new = renamed[0]
        reasons.append(
            f"{len(renamed)} file(s) renamed: e.g. {new.name!r} where PathBench has "
            f"{old.name!r} (PathBench's README renames EasyCall's 'm13 _' files to 'm13_')"
        )
    if counts["missing"] == total and not root.found:
        reasons.append(f"no folder of the corpus found under {root.root}: is it the right root?")
    elif counts["missing"] > len(renamed):
        reasons.append(f"incomplete copy: {counts['missing'] - len(renamed)} recording(s) absent")
    present = total - counts["missing"]
    if counts["different"] == present and name in _DIFFERENT_AUDIO:
        reasons.append(_DIFFERENT_AUDIO[name])
    elif counts["different"]:
        reasons.append(
            f"{counts['different']} of {present} present recording(s) differ from PathBench's: "
            "another release of the corpus, or converted or edited files"
        )
    if counts["unhashed"]:
        reasons.append(f"{counts['unhashed']} recording(s) not hashed")
    return "; ".join(reasons)


def check(
    recordings: Sequence[Recording], roots: Mapping[str, CorpusRoot | None], threads: int | None
) -> dict[str, Any]:
    """The check of ``recordings``: counts per corpus (each distinct file and digest once,
    with :func:`cause`), per dataset directory and the ``pathbench_audio`` of each of
    PathBench's columns. ``threads`` None skips hashing (every present file is unhashed)."""
    local = {r.local for r in recordings if r.local is not None}
    present = {path for path in local if path.is_file()}
    digests = {} if threads is None else digests_of(present, threads)
    datasets: dict[str, Tally] = {}
    corpora: dict[str, Tally] = {}
    renamed: dict[str, dict[Path, Path]] = {}
    seen = set()
    for recording in recordings:
        result = outcome(recording, present, digests)
        shown = str(recording.local or recording.foreign)
        datasets.setdefault(recording.dataset, Tally()).add(result, f"{recording.key} {shown}")
        corpus = corpus_of(recording.dataset)
        if (recording.local, recording.foreign, recording.expected) in seen:
            continue
        seen.add((recording.local, recording.foreign, recording.expected))
        corpora.setdefault(corpus, Tally()).add(result, shown)
        root = roots.get(corpus)
        if result == "missing" and root and (new := root.renamed(recording.local)):
            renamed.setdefault(corpus, {})[recording.local] = new
    counts = {name: tally.as_dict() for name, tally in datasets.items()}
    columns = pathbench_columns(counts)
    return {
        "pathbench_commit": PATHBENCH_COMMIT,
        "hashed": threads is not None,
        "corpora": {
            name: {
                **tally.as_dict(),
                "root": str(roots[name].root) if roots.get(name) else None,
                "columns": sum(corpus_of(c) == name for c in columns),
                "cause": cause(name, tally, roots.get(name), list(renamed.get(name, {}).items())),
            }
            for name, tally in corpora.items()
        },
        "datasets": counts,
        "columns": {name: dataset_status(counts, sets) for name, sets in columns.items()},
    }


def prepare(
    pathbench: str | Path,
    corpus_roots: Mapping[str, str | Path],
    out: str | Path,
    threads: int | None = 4,
) -> dict[str, Any]:
    """Copy PathBench's datasets folder to ``out`` repointed at ``corpus_roots`` (corpus
    folder name, e.g. ``uaspeech``, -> the user's copy), check every recording and write the
    check to ``out``/:data:`CHECK_FILE`; return it. A name that is no corpus of the folder is
    refused, naming the corpora it has."""
    pathbench, out = Path(pathbench), Path(out)
    if not pathbench.is_dir():
        raise ValueError(f"{pathbench}: no such directory (PathBench's datasets/ folder)")
    corpora = sorted(p.name for p in pathbench.iterdir() if p.is_dir())
    if unknown := sorted(set(corpus_roots) - set(corpora)):
        raise ValueError(
            f"--corpus {', '.join(unknown)}: not a corpus of {pathbench} "
            f"(it has {', '.join(corpora)})"
        )
    for name, root in corpus_roots.items():
        if not Path(root).is_dir():
            raise ValueError(f"--corpus {name}={root}: no such directory")
    roots = {
        name: CorpusRoot(Path(root), _foreign_paths(pathbench / name))
        for name, root in corpus_roots.items()
    }
    result = check(repoint(pathbench, out, roots), roots, threads)
    write_json(result, out / CHECK_FILE)
    return result


def _foreign_paths(corpus: Path) -> list[str]:
    """Every path the ``wav.scp`` files under ``corpus`` name."""
    return [
        line[1]
        for scp in sorted(corpus.rglob("wav.scp"))
        for line in wav_scp_lines(scp)
        if not isinstance(line, str)
    ]


TABLE_COUNTS = ("columns", "recordings", "matched", "missing", "different", "unhashed")


def format_check(result: Mapping[str, Any]) -> str:
    """The check as a table: per corpus its columns, its recordings by outcome and the
    cause, then how many of PathBench's columns are verified."""
    rows = [("corpus", *TABLE_COUNTS, "cause")] + [
        (name, *(str(entry[key]) for key in TABLE_COUNTS), entry["cause"] or "PathBench's audio")
        for name, entry in sorted(result["corpora"].items())
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COUNTS) + 1)]
    lines = [
        "  ".join(
            [row[0].ljust(widths[0])]
            + [cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:], strict=True)]
            + [row[-1]]
        )
        for row in rows
    ]
    statuses = Counter(result["columns"].values())
    summary = ", ".join(f"{statuses[s]} {s}" for s in (VERIFIED, DIFFERS, UNCHECKED))
    return "\n".join([*lines, f"PathBench's columns: {summary}"]) + "\n"
