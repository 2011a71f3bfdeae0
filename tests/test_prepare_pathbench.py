"""``pathbench-flow prepare-pathbench`` repoints PathBench's metadata at a user's corpora and
says which recordings are PathBench's.

Why: PathBench's ``wav.scp`` files name its authors' disks, and a copy of a corpus that is not
PathBench's (UASpeech without noise reduction, EasyCall's unrenamed files) changes every r
without a trace. The tests repoint the repository's cut of PathBench's metadata (copied to
tmp) onto corpora written in tmp: tiny WAV files at the paths PathBench's ``wav.scp`` names.
PathBench's ``wav_hash.scp`` digests are of its real audio, which tiny files never match, so
the test rewrites TORGO's digests in the copy to its files' real SHA-256 to have matches.
MDSC and YouTube, which the cut lacks, are laid out in their shape as the shipped config's
dry run lays them out (``test_pathbench_config.lay_out``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import wave
from pathlib import Path, PurePosixPath

import pytest
import yaml
from test_pathbench_config import CONFIG, lay_out
from test_results_table import correlations

from pathbench_flow.cli import main
from pathbench_flow.data.pathbench_corpora import (
    CHECK_FILE,
    DIFFERS,
    UNCHECKED,
    VERIFIED,
    wav_scp_lines,
)
from pathbench_flow.reporting.published_results import published_vs_measured
from pathbench_flow.reporting.results_table import (
    AUDIO_ROW,
    DatasetColumn,
    aligned_r,
    pathbench_table,
)
from pathbench_flow.stages.analysis import pathbench_audio
from pathbench_flow.testing import KALDI_METADATA
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

FOREIGN = {
    "torgo": "/data/group1/z40484r/datasets/",  # the user's root holds TORGO/
    "easycall": "/data/group1/z40484r/datasets/EasyCall/",  # the root is EasyCall/ itself
    "uaspeech": "/nas02/homes/bence22-1000065/datasets/UASpeech/UASpeech/audio/noisereduce/",
}
"""What each corpus's tmp copy leaves out of PathBench's paths: the rest is its layout."""
ALTERED = "F01_Session1_0006"
"""A TORGO recording whose file the test changes after taking its digest."""
DROPPED = "f01_03_aggiungi"
"""An EasyCall recording the copy lacks."""


def write_wav(path: Path, key: str) -> None:
    """A 10-sample 16 kHz WAV whose samples depend on ``key``, so files differ."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(hashlib.sha256(key.encode()).digest()[:20])


def recordings(tree: Path, corpus: str) -> dict[str, str]:
    """Recording id -> foreign path over every wav.scp of ``corpus``."""
    return {
        line[0]: line[1]
        for scp in sorted((tree / corpus).rglob("wav.scp"))
        for line in wav_scp_lines(scp)
        if not isinstance(line, str)
    }


def make_corpora(tree: Path, base: Path) -> dict[str, Path]:
    """The three corpora's copies under ``base``: TORGO whole, with digests rewritten to its
    files' own and then one file altered; EasyCall without one file and with m13's files
    named as EasyCall ships them (``m13 _``); UASpeech whole, PathBench's digests kept."""
    roots = {name: base / name for name in FOREIGN}
    for name, prefix in FOREIGN.items():
        for key, foreign in recordings(tree, name).items():
            relative = foreign.removeprefix(prefix)
            if key == DROPPED:
                continue
            if relative.startswith("m13/"):
                relative = relative.replace("/m13_", "/m13 _")
            write_wav(roots[name] / relative, key)
    torgo = {
        key: roots["torgo"] / foreign.removeprefix(FOREIGN["torgo"])
        for key, foreign in recordings(tree, "torgo").items()
    }
    for scp in (tree / "torgo").rglob("wav_hash.scp"):
        keys = [line.split()[0] for line in scp.read_text().splitlines()]
        scp.write_text(
            "".join(f"{k} {hashlib.sha256(torgo[k].read_bytes()).hexdigest()}\n" for k in keys)
        )
    write_wav(torgo[ALTERED], "altered")
    return roots


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> tuple[Path, Path, str]:
    """PathBench's metadata cut, prepared with three of its five corpora; the printed table."""
    base = tmp_path_factory.mktemp("prepare")
    tree = base / "pathbench"
    lay_out(tree)
    roots = make_corpora(tree, base / "corpora")
    out = base / "datasets"
    args = [f"--corpus={name}={root}" for name, root in roots.items()]
    assert (
        main(["prepare-pathbench", "--pathbench-datasets", str(tree), *args, "--out", str(out)])
        == 0
    )
    return tree, out, json.loads((out / CHECK_FILE).read_text())


def test_outcomes_and_causes_per_corpus(prepared) -> None:
    """TORGO: all matched but the altered file; EasyCall: m13's files found renamed and one
    absent; UASpeech: all different, said to be the audio without noise reduction; the two
    corpora not given are neither found nor hashed."""
    tree, _, check = prepared
    corpora = check["corpora"]
    n_torgo = len(recordings(tree, "torgo"))
    m13 = sum(k.startswith("m13_") for k in recordings(tree, "easycall"))
    assert corpora["torgo"]["matched"] == n_torgo - 1 and corpora["torgo"]["different"] == 1
    assert corpora["torgo"]["cause"].startswith(f"1 of {n_torgo} present recording(s) differ")
    assert corpora["easycall"]["missing"] == m13 + 1
    assert corpora["easycall"]["matched"] == 0  # PathBench's digests of its real audio
    assert f"{m13} file(s) renamed" in corpora["easycall"]["cause"]
    assert "incomplete copy: 1 recording(s) absent" in corpora["easycall"]["cause"]
    assert corpora["uaspeech"]["different"] == corpora["uaspeech"]["recordings"]
    assert "noise-reduced" in corpora["uaspeech"]["cause"]
    assert corpora["copas"]["not_given"] == corpora["copas"]["recordings"] > 0
    assert [corpora[c]["columns"] for c in sorted(corpora)] == [6, 4, 2, 2, 4, 2, 1]


def test_columns_are_verified_only_where_every_recording_matched(prepared) -> None:
    """A TORGO column is verified unless its test or control set lists the altered file."""
    tree, _, check = prepared
    for column, status in check["columns"].items():
        corpus = PurePosixPath(column).parts[0]
        if corpus == "torgo":
            control = column.replace("pathological", "control")
            altered = any(
                f"{ALTERED} " in (tree / folder / "wav.scp").read_text()
                for folder in (column, control)
            )
            assert status == (DIFFERS if altered else VERIFIED), column
        else:
            assert status == (DIFFERS if corpus in FOREIGN else UNCHECKED), column


def test_wav_scp_points_at_the_copies_and_the_rest_is_copied(prepared) -> None:
    """Every rewritten path of a present file exists; the corpora not given and every other
    file (segments, text, wav_hash.scp) are PathBench's bytes."""
    tree, out, check = prepared
    for source in sorted(p for p in tree.rglob("*") if p.is_file()):
        copy = out / source.relative_to(tree)
        corpus = source.relative_to(tree).parts[0]
        if source.name != "wav.scp" or corpus not in FOREIGN:
            assert copy.read_bytes() == source.read_bytes(), copy
            continue
        for key, path in (line for line in wav_scp_lines(copy) if not isinstance(line, str)):
            assert Path(path).is_file() or key == DROPPED or "/m13_" in path, (key, path)
    assert check["hashed"] is True


def test_no_hash_finds_files_without_hashing(tmp_path, capsys) -> None:
    """``--no-hash``: present files are unhashed, the columns unchecked, the table printed."""
    tree = tmp_path / "pathbench"
    shutil.copytree(KALDI_METADATA, tree)
    root = make_corpora(tree, tmp_path / "corpora")["uaspeech"]
    out = tmp_path / "out"
    argv = ["prepare-pathbench", "--pathbench-datasets", str(tree), "--corpus", f"uaspeech={root}"]
    assert main([*argv, "--out", str(out), "--no-hash"]) == 0
    check = json.loads((out / CHECK_FILE).read_text())
    assert check["corpora"]["uaspeech"]["unhashed"] == check["corpora"]["uaspeech"]["recordings"]
    assert set(check["columns"].values()) == {UNCHECKED}
    assert "PathBench's columns: 0 verified, 0 differs, 18 unchecked" in capsys.readouterr().out
    assert main([*argv, "--corpus", "mdsc=/tmp", "--out", str(out)]) == 1


def test_tables_carry_the_status_and_differing_audio_is_refused(prepared) -> None:
    """The stage's statuses from the check: verified and differs columns, a column without
    its directories unchecked; refused while one differs, unless accepted; PathBench's table
    gains the row and the comparison the column."""
    _, out, _ = prepared
    columns = [
        DatasetColumn("t", "TORGO", "Sentence", "MC"),
        DatasetColumn("u", "UASpeech", "Word", "MC"),
        DatasetColumn("n", "NeuroVoz", "Sentence", "MC"),
    ]
    dirs = {
        "t": [
            out / "torgo/pathological/utterances/balanced",
            out / "torgo/control/utterances/balanced",
        ],
        "u": [out / "uaspeech/pathological/word/balanced", out / "uaspeech/control/word/balanced"],
    }
    with pytest.raises(ValueError, match=r"column\(s\) UASpeech Word MC is not PathBench's"):
        pathbench_audio(columns, out / CHECK_FILE, dirs, accept_differences=False)
    audio = pathbench_audio(columns, out / CHECK_FILE, dirs, accept_differences=True)
    assert audio == {
        "UASpeech Word MC": DIFFERS,
        "NeuroVoz Sentence MC": UNCHECKED,
        "TORGO Sentence MC": VERIFIED,
    }
    assert pathbench_audio(columns, None, dirs, False) == dict.fromkeys(audio, UNCHECKED)
    aligned = aligned_r({c.dataset: correlations({"cpp_fa": 0.5}) for c in columns}, columns)
    table = pathbench_table(aligned, audio).set_index("Metric")
    assert table.loc[AUDIO_ROW, "UASpeech Word MC"] == DIFFERS
    assert table.loc[AUDIO_ROW, "COPAS Word MC"] == ""
    comparison = published_vs_measured(aligned, audio)
    assert set(comparison[comparison["column"] == "UASpeech Word MC"][AUDIO_ROW]) == {DIFFERS}
    assert len(pathbench_table(aligned)) == 12  # without statuses: PathBench's 12 rows


def test_shipped_config_plans_every_column_over_the_prepared_root(prepared) -> None:
    """`snakemake -n` with config/pathbench.yaml (fetching on, as shipped) and the prepared
    root as datasets_root plans the 21 datasets once differing audio is accepted; without that,
    the differing columns stop the plan, before any job."""
    for module in ("torch", "transformers"):  # the config's model rows are checked at planning
        pytest.importorskip(module, reason="config/pathbench.yaml needs the neural extra")
    _, out, _ = prepared
    workdir = copy_workflow(out.parent / "run")
    arguments = ["-n", "--configfile", "config/pathbench.yaml", "--config", f"datasets_root={out}"]
    refused = snakemake(workdir, *arguments, check=False)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "UASpeech Word MC" in said and "accept_audio_differences" in said, said[-3000:]
    assert not (workdir / "results").exists()
    run = snakemake(workdir, *arguments, "accept_audio_differences=True")
    planned = set(
        re.findall(
            r"rule validate_dataset:\n(?:    .*\n)*?    wildcards: dataset=(\w+)", run.stdout
        )
    )
    assert planned == set(yaml.safe_load(CONFIG.read_text())["datasets"])
    assert "rule results_table:" in run.stdout
