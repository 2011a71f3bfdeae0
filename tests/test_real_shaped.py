"""The workflow end to end on a dataset shaped like a real English corpus (TORGO's sentences).

Shaped like `tests/fixtures/kaldi-metadata/torgo`: speaker ids F01/M01, utterance ids
``<speaker>_Session1_<n>``, absolute paths in ``wav.scp``, punctuated sentences with
apostrophes, a 1.5-5 ``spk2score`` scale, and, like PathBench's YouTube set, no
``spk2gender`` and no control (reference) dataset. The audio is espeak-ng speech, one voice,
pitch and rate per speaker, in background noise.

Checked on this shape: apostrophes align, reference measures without references have no
value instead of 0.0, no speaker silently leaves a correlation,
and that editing, touching or deleting files reruns exactly what they affect.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml
from scipy.signal import resample_poly

from pathbench_flow import SAMPLE_RATE
from pathbench_flow.common.io import read_parquet
from pathbench_flow.testing.speech_fixtures import pad_in_noise, require_espeak
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

pytestmark = pytest.mark.slow

SENTENCES = (
    "I don't want to go outside today.",
    "She's taking the dog to the park, isn't she?",
    "We'll meet at John's house after work.",
    "They've already eaten, so you can't join them.",
)
# speaker: (espeak voice variant, pitch 0-99, words per minute, intelligibility 1.5-5)
SPEAKERS = {
    "F01": ("f2", 70, 95, 1.5),
    "F03": ("f3", 60, 150, 5.0),
    "F04": ("f4", 80, 125, 3.5),
    "M01": ("m1", 30, 100, 2.0),
    "M02": ("m2", 40, 165, 4.5),
    "M03": ("m3", 25, 140, 4.0),
    "M04": ("m4", 35, 110, 2.5),
    "M05": ("m7", 45, 130, 3.0),
}
CONFIG = {
    "datasets": {"torgo_like": {"path": "data/torgo_like"}},
    "evaluators": [
        "cpp",
        "cpps",
        "wada_snr",
        "std_pitch",
        "speech_rate",
        "f0_range",
        "vsa",
        "wpm",
        "sphinx_wer",
        "p_estoi",
        "nad",
    ],
    "evaluator_options": {"nad": {"features": "mfcc"}},
    "variants": ["raw", "fa"],
    "shard_size": 16,
}


def espeak(text: str, voice: str, pitch: int, rate: int) -> np.ndarray:
    """espeak-ng's US English with a voice variant, pitch and rate, at 16 kHz."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "speech.wav"
        command = ["espeak-ng", "-v", f"en-us+{voice}", "-p", str(pitch), "-s", str(rate)]
        subprocess.run([*command, "-w", str(path), text], check=True)
        audio, rate_in = sf.read(path, dtype="float64")
    divisor = np.gcd(rate_in, SAMPLE_RATE)
    return resample_poly(audio, SAMPLE_RATE // divisor, rate_in // divisor)


def write_corpus(root: Path) -> None:
    """The Kaldi files and audio of the corpus (no spk2gender, no controls)."""
    rng = np.random.default_rng(20260101)
    lines: dict[str, list[str]] = {"wav.scp": [], "text": [], "utt2spk": []}
    for speaker, (voice, pitch, rate, _score) in SPEAKERS.items():
        folder = root / "audio" / speaker / "Session1" / "wav_arrayMic"
        folder.mkdir(parents=True)
        for k, sentence in enumerate(SENTENCES, start=1):
            utt = f"{speaker}_Session1_{k:04d}"
            padded = pad_in_noise(espeak(sentence, voice, pitch, rate), rng, snr_db=25.0)
            path = folder / f"{k:04d}.wav"
            sf.write(path, padded.audio, SAMPLE_RATE, subtype="PCM_16")
            lines["wav.scp"].append(f"{utt} {path}")
            lines["text"].append(f"{utt} {sentence}")
            lines["utt2spk"].append(f"{utt} {speaker}")
    lines["spk2score"] = [f"{s} {v[3]:g}" for s, v in SPEAKERS.items()]
    lines["language"] = ["en"]
    for name, content in lines.items():
        (root / name).write_text("".join(f"{line}\n" for line in content), encoding="utf-8")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    require_espeak()
    workdir = copy_workflow(tmp_path_factory.mktemp("real_shaped"))
    write_corpus(workdir / "data" / "torgo_like")
    (workdir / "my.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(workdir, "--cores", "2", "--configfile", "my.yaml")
    return workdir


def results(run: Path) -> Path:
    return run / "results" / "torgo_like"


def test_no_demo_job_ran(run):
    assert not (run / "resources").exists() and not (run / "results" / "demo").exists()


def test_sentences_with_apostrophes_are_aligned(run):
    trims = pd.concat(read_parquet(p) for p in sorted((results(run) / "trim").glob("*.parquet")))
    assert len(trims) == len(SPEAKERS) * len(SENTENCES)
    aligned = (trims["status"] == "aligned").mean()
    assert aligned >= 0.9, trims.loc[trims["status"] != "aligned", ["utt_id", "message"]]


def test_reference_measures_without_references_have_no_value(run):
    scores = pd.concat(
        read_parquet(p) for p in sorted((results(run) / "reference_scores").rglob("*.parquet"))
    )
    control = scores[scores["reference_type"] == "control"]
    assert len(control) and control["score"].isna().all()
    assert set(control["status"]) == {"no_references"}
    everyone = scores[scores["reference_type"] == "all"]
    assert everyone["score"].notna().all(), everyone[everyone["score"].isna()]


def test_every_speaker_stays_in_every_correlation_with_values_for_them(run):
    speakers = read_parquet(results(run) / "speakers.parquet")
    correlations = pd.read_csv(results(run) / "correlations.csv", keep_default_na=False)
    valued = speakers[np.isfinite(speakers["value"])].groupby("metric")["speaker_id"].nunique()
    for row in correlations.itertuples(index=False):
        assert row.n == valued.get(row.metric, 0), row
        assert row.n_excluded == 0 and row.excluded_speakers == "", row
    correlated = correlations[correlations["reason"] == ""]
    assert len(correlated) >= 15, correlations[["metric", "n", "reason"]]
    report = json.loads((results(run) / "aggregation.json").read_text())
    assert report["common_speaker_set"]["speakers"] == sorted(SPEAKERS)


def _score_mtimes(run: Path) -> dict[str, int]:
    folder = results(run)
    files = [*folder.glob("trim/*.parquet"), *folder.glob("scores/*/*.parquet")]
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in files}


def test_an_edited_wav_reruns_only_its_shard(run):
    before = _score_mtimes(run)
    manifest = read_parquet(results(run) / "manifest.parquet").set_index("utt_id")
    edited = "M04_Session1_0002"
    shard = f"{manifest.at[edited, 'shard']:04d}"
    path = Path(manifest.at[edited, "audio_path"])
    audio, rate = sf.read(path, dtype="float64")
    sf.write(path, audio * 0.5, rate, subtype="PCM_16")  # same length, new content

    snakemake(run, "--cores", "2", "--configfile", "my.yaml")
    after = _score_mtimes(run)
    rerun = sorted(name for name in before if after[name] != before[name])
    assert rerun == sorted(name for name in before if name.endswith(f"/{shard}.parquet"))
    plan = snakemake(run, "-n", "--configfile", "my.yaml")
    assert "Nothing to be done" in plan.stdout + plan.stderr


def test_a_touched_wav_with_the_same_content_reruns_nothing(run):
    wav = sorted((run / "data" / "torgo_like" / "audio").rglob("*.wav"))[0]
    later = wav.stat().st_mtime_ns + 60 * 10**9
    os.utime(wav, ns=(later, later))
    plan = snakemake(run, "-n", "--configfile", "my.yaml")
    assert "Nothing to be done" in plan.stdout + plan.stderr, plan.stdout[-3000:]


def test_a_deleted_intermediate_file_is_rebuilt_by_a_plain_run(run):
    deleted = results(run) / "scores" / "cpp" / "0001.parquet"
    content = deleted.read_bytes()
    deleted.unlink()
    snakemake(run, "--cores", "2", "--configfile", "my.yaml")
    assert deleted.read_bytes() == content
