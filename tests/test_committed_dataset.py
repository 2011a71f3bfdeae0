"""The dataset committed for the tests' config, .test/data/mine: valid as it stands, small, and
what its generator (.test/make_data.py) makes, so the two cannot drift apart unnoticed."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pytest

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.data.validation import validate_directory
from pathbench_flow.stats.correlation import MIN_SPEAKERS
from pathbench_flow.testing.speech_fixtures import require_espeak
from pathbench_flow.testing.workflow_run import REPO

DATASET = REPO / ".test" / "data" / "mine"
GENERATOR = REPO / ".test" / "make_data.py"
MAX_BYTES = 100_000
"""Every clone carries the dataset, so it stays this small (.test/README.md)."""


def files_of(root: Path) -> dict[str, bytes]:
    files = sorted(path for path in root.rglob("*") if path.is_file())
    return {str(path.relative_to(root)): path.read_bytes() for path in files}


def test_the_committed_dataset_validates_without_a_finding():
    validated = validate_directory(DATASET, check_audio=True, verify_hashes=False)
    assert validated.findings == []
    assert len(validated.utterances) == 8
    formats = {(utt.sample_rate, utt.channels) for utt in validated.utterances.values()}
    assert formats == {(SAMPLE_RATE, 1)}
    rated = [spk for spk, score in validated.speaker_scores.items() if not math.isnan(score)]
    # one more than a correlation needs: a speaker one metric loses leaves the others defined
    assert len(rated) > MIN_SPEAKERS
    assert sum(len(content) for content in files_of(DATASET).values()) < MAX_BYTES


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> tuple[dict, Path]:
    """The generator's namespace, and the dataset it writes into a scratch directory."""
    require_espeak()
    generator = runpy.run_path(str(GENERATOR), run_name="make_data")
    target = tmp_path_factory.mktemp("regenerated") / "mine"
    generator["write_dataset"](target)
    return generator, target


def test_the_generator_remakes_the_kaldi_files(regenerated):
    _, target = regenerated
    made, committed = files_of(target), files_of(DATASET)
    assert sorted(made) == sorted(committed)
    kaldi = [name for name in committed if not name.endswith(".wav")]
    assert {name: made[name] for name in kaldi} == {name: committed[name] for name in kaldi}


def test_the_generator_remakes_the_wav_files_byte_for_byte(regenerated):
    generator, target = regenerated
    release, recorded = generator["espeak_release"](), generator["ESPEAK_NG_RELEASE"]
    if release != recorded:
        pytest.skip(reason=f"espeak-ng {release} synthesises other samples than {recorded}")
    made, committed = files_of(target), files_of(DATASET)
    wavs = sorted(name for name in committed if name.endswith(".wav"))
    assert [name for name in wavs if made[name] != committed[name]] == []
