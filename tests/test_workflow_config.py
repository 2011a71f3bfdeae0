"""The workflow's config handling, seen through real `snakemake -n` runs of a copied workflow.

A user config given with --configfile stands alone (no demo jobs), and config problems stop
the run before any job, naming the key. The user config is the tests' own, .test/config/config.yaml
(the Snakemake workflow catalog's convention), on the dataset committed beside it
(.test/data/mine, .test/README.md), run from the root and with .test as the working directory.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from pathbench_flow.common.io import read_parquet
from pathbench_flow.testing.kaldi_builder import build_dataset
from pathbench_flow.testing.workflow_run import REPO, copy_workflow, dry_run, snakemake

TEST_DIR = REPO / ".test"
TEST_CONFIG = TEST_DIR / "config" / "config.yaml"
USER_CONFIG = yaml.safe_load(TEST_CONFIG.read_text())
DATASET = USER_CONFIG["datasets"]["mine"]["path"]
"""The committed dataset as the config names it, relative to the repository root."""
RUN_LEFTOVERS = shutil.ignore_patterns(".snakemake", "results", "logs", "__pycache__")
"""What a `snakemake --directory .test` in the checkout may have left in .test."""


def copy_test_directory(root: Path) -> Path:
    """.test copied into the workflow copy ``root``; its link .test/.test/data stays a link,
    as a clone has it, so the copy's own dataset is the one found from inside .test."""
    shutil.copytree(TEST_DIR, root / ".test", symlinks=True, ignore=RUN_LEFTOVERS)
    return root


def planned_recordings(plan: str) -> list[str]:
    """The committed dataset's recordings (wav.scp) that a dry run's output does not name."""
    wav_scp = (REPO / DATASET / "wav.scp").read_text().splitlines()
    recordings = [f"{DATASET}/{line.split()[1]}" for line in wav_scp]
    return [path for path in recordings if path not in plan]


@pytest.fixture
def workdir(tmp_path):
    return copy_test_directory(copy_workflow(tmp_path / "wf"))


def test_a_user_config_stands_alone_without_the_demo(workdir):
    """The config file itself, as CI gives it from the repository root."""
    plan = snakemake(workdir, "-n", "--configfile", ".test/config/config.yaml").stdout
    assert planned_recordings(plan) == []
    assert "make_demo" not in plan and "results/demo" not in plan and "resources/demo" not in plan
    assert "results/mine/scores/cpp/0000.parquet" in plan
    # no openset block: the schema's default (disabled) applies instead of a KeyError
    assert "openset" not in plan


def test_utterance_correlations_are_planned_where_utt2score_exists(workdir):
    """A dataset that ships utt2score (PathBench's YouTube layout here, with MDSC's command
    task beside it) gets the utterance-level correlations; one without gets none."""
    plan = dry_run(workdir, USER_CONFIG).stdout
    assert "correlate_utterances" not in plan and "results/pathbench_table.csv" in plan
    commands = "data/mdsc/pathological/command/balanced"
    shutil.copytree(workdir / DATASET, workdir / commands)
    (workdir / DATASET / "utt2score").write_text("F01_go 3.5\nM02_yes N/A\n")
    config = USER_CONFIG | {
        "datasets": {
            "mine": {"path": DATASET, "corpus": "youtube"},
            "cmds": {"path": commands},
        }
    }
    plan = dry_run(workdir, config).stdout
    assert "results/mine/utterance_correlations.csv" in plan
    assert "results/cmds/utterance_correlations.csv" not in plan


def test_openset_without_a_grid_uses_the_default_grid(workdir):
    plan = dry_run(workdir, USER_CONFIG | {"openset": {"enabled": True}}).stdout
    assert "openset_features" in plan and "results/mine/openset/summary.json" in plan


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"evaluators": []}, "evaluators"),
        ({"evaluator_options": {"cpp": {"window": 3}}}, "evaluator_options.cpp: unknown option"),
        ({"datasets": {"mine": {"path": "data/gone"}}}, "datasets.mine.path: directory"),
        ({"datasets": {"mine": {"path": f"{DATASET}/text"}}}, "is a file, not a directory"),
        (
            {"datasets": {"mine": {"path": "resources/demo/pathologcal"}}},
            "datasets.mine.path: directory resources/demo/pathologcal does not exist",
        ),
        (
            {"datasets": {"mine": {"path": DATASET, "reference": "data/ctl"}}},
            "datasets.mine.reference",
        ),
        ({"datasets": {"mine": {"path": DATASET, "task": "command"}}}, "datasets.mine.task"),
        (
            {
                "datasets": {
                    "mine": {"path": DATASET, "corpus": "YT"},
                    "again": {"path": DATASET, "corpus": "youtube"},
                }
            },
            "both map to the results-table column 'YT Sentence Full'",
        ),
    ],
)
def test_config_problems_stop_before_any_job(workdir, change, expected):
    result = dry_run(workdir, USER_CONFIG | change, check=False)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr, result.stderr[-3000:]
    assert not (workdir / "results").exists()


def _job_inputs(plan: str, kind: str) -> dict[str, list[str]]:
    """Output file → the inputs of its job whose path contains ``kind``, for every job of a
    dry run."""
    jobs = {}
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) )", plan):
        inputs = re.search(r"^    input: (.*)$", block, re.MULTILINE)
        outputs = re.search(r"^    output: (.*)$", block, re.MULTILINE)
        found = sorted(p for p in inputs.group(1).split(", ") if kind in p) if inputs else []
        for output in outputs.group(1).split(", ") if outputs else []:
            jobs[output] = found
    return jobs


def _trim_inputs(plan: str) -> dict[str, list[str]]:
    """Output file → the trim tables among its job's inputs, for every job of a dry run."""
    return _job_inputs(plan, "/trim/")


@pytest.mark.parametrize("check_audio", [True, False])
def test_jobs_list_their_audio_only_where_the_manifest_has_no_digests(workdir, check_audio):
    """Validation always lists every recording. With audio checks the manifest holds each
    recording's SHA-256, so the per-shard jobs read their shard's rows instead (no Snakemake stat
    of every file at every job selection); without, they list the audio they open."""
    config = USER_CONFIG | {"validation": {"check_audio": check_audio}, "shard_size": 4}
    every = sorted(f"{DATASET}/{line.split()[1]}" for line in (REPO / DATASET / "wav.scp").open())
    validation = _job_inputs(dry_run(workdir, config).stdout, ".wav")
    assert validation["results/mine/manifest.parquet"] == every
    snakemake(workdir, "--cores", "1", "--configfile", "my.yaml", "--until", "shard_manifest")
    audio = _job_inputs(dry_run(workdir, config).stdout, ".wav")
    manifest = read_parquet(workdir / "results/mine/manifest.parquet")
    first_shard = sorted(manifest.loc[manifest["shard"] == 0, "audio_path"])
    assert len(first_shard) == 4 and set(first_shard) <= set(every)
    expected = [] if check_audio else first_shard
    for output in ("scores/cpp/0000", "scores/wpm/0000", "trim/0000"):
        assert audio[f"results/mine/{output}.parquet"] == expected, output


def test_each_scoring_job_depends_only_on_the_trim_tables_it_reads(workdir):
    """The fa variant reads trim tables, raw audio none: a raw reference job waits for no
    trimming, an fa one for its shard's and its references' trims, and an evaluator without an
    fa variant for none even when fa is among the variants. Its own two datasets share their
    texts, so that the control speakers are "all" references."""
    build_dataset(workdir / "data" / "mine")
    build_dataset(workdir / "data" / "ctl", id_prefix="ref_")
    config = USER_CONFIG | {
        "datasets": {"mine": {"path": "data/mine", "reference": "data/ctl"}},
        "evaluators": ["cpp", "sphinx_wer", "f0_range", "p_estoi"],
        "reference_types": ["all"],
        "shard_size": 2,
    }
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    # The shard checkpoint decides which references (and so which trims) a job reads.
    snakemake(workdir, "--cores", "1", "--configfile", "my.yaml", "--until", "shard_manifest")
    trims = _trim_inputs(dry_run(workdir, config).stdout)
    mine = "results/mine"
    own = [f"{mine}/trim/{shard}.parquet" for shard in ("0000", "0001")]
    references = [f"{mine}/reference/trim/{shard}.parquet" for shard in ("0000", "0001")]
    assert trims[f"{mine}/scores/cpp/0000.parquet"] == own[:1]
    assert trims[f"{mine}/scores/sphinx_wer/0000.parquet"] == []
    assert trims[f"{mine}/speaker_scores/f0_range.parquet"] == own
    assert trims[f"{mine}/reference_scores/p_estoi/raw/all/0000.parquet"] == []
    # Shard 0 of each set holds one text ("a dog ran", both speakers): the "all" references of
    # shard 0 are its other speaker's reading and the control set's, so it waits for no other
    # shard's trims.
    assert trims[f"{mine}/reference_scores/p_estoi/fa/all/0000.parquet"] == [
        references[0],
        own[0],
    ]


def test_the_test_directory_runs_as_its_own_working_directory(tmp_path):
    """`snakemake --directory .test` (the catalog's CI call) reads .test/config/config.yaml and
    finds the committed dataset through the link in .test, with workflow/Snakefile found from
    the root; the plan names the recordings by the same paths as a run from the root."""
    root = copy_test_directory(copy_workflow(tmp_path / "wf"))
    plan = snakemake(root, "-n", "--directory", ".test").stdout
    assert planned_recordings(plan) == []
    assert "results/mine/scores/wpm/0000.parquet" in plan and "make_demo" not in plan
    assert (root / ".test" / ".snakemake").is_dir()
