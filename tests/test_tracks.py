"""Shared analysis tracks: the memo, the track files, and the consumers reading them.

The guarantee under test is that a measure's result never depends on whether its analysis was
reused: a track value comes back bit for bit from the memo and from a track file, and only for
exactly the audio and settings it was computed from.
"""

from __future__ import annotations

import math
import re

import numpy as np
import parselmouth
import pytest
import yaml
from parselmouth.praat import call
from test_speech_rate import syllables

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.status import TOO_SHORT, NoScore
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item
from pathbench_flow.evaluators.signal import CPPSEvaluator, StdPitchEvaluator
from pathbench_flow.evaluators.speaker import F0RangeEvaluator, VSAEvaluator
from pathbench_flow.measures import cepstral, speech_rate, vsa
from pathbench_flow.measures.pitch import pitch_track, praat_pitch
from pathbench_flow.neural.models import ModelUnavailable
from pathbench_flow.openset.features import utterance_features
from pathbench_flow.testing import RECORDINGS as FIXTURES
from pathbench_flow.testing.kaldi_builder import build_tone_dataset
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake
from pathbench_flow.tracks.store import (
    EXCEPTION,
    NO_SCORE,
    VALUE,
    load_tracks,
    track_row,
    write_track,
)

NAMES = ("BLUE_english32", "BLUE_english33", "BLUE_english34", "BLUE_japanese10")


@pytest.fixture(autouse=True)
def empty_memo():
    tracks.forget()
    yield
    tracks.forget()


@pytest.fixture(scope="module")
def speech() -> list[np.ndarray]:
    return [load_audio(FIXTURES / f"{name}.wav") for name in NAMES]


def _bytes(arrays: tuple[np.ndarray, ...]) -> list[bytes]:
    return [array.tobytes() for array in arrays]


def test_a_remembered_track_is_the_computed_one_and_is_not_recomputed(speech):
    first = pitch_track(speech[0], SAMPLE_RATE)
    again = pitch_track(speech[0].copy(), SAMPLE_RATE)  # another array, the same samples
    assert _bytes(again) == _bytes(first) == _bytes(praat_pitch(speech[0], SAMPLE_RATE))
    assert tracks.counts() == {("pitch", "computed"): 1, ("pitch", "reused"): 1}
    with pytest.raises(ValueError):
        again[1][0] = 1.0  # shared with every later caller, so read-only


def test_other_audio_dtype_shape_or_settings_do_not_collide(speech):
    audio = speech[0]
    nudged = audio.copy()
    nudged[1000] += 2.0**-20
    other_settings = tracks.Track(
        "pitch", tracks.PITCH.fields, "other settings", tracks.PITCH.function
    )
    pitch_track(audio, SAMPLE_RATE)
    pitch_track(nudged, SAMPLE_RATE)
    tracks.value(other_settings, audio, SAMPLE_RATE)
    tracks.value(tracks.PITCH, audio.astype(np.float32), SAMPLE_RATE)
    assert tracks.counts() == {("pitch", "computed"): 4}
    digests = {
        tracks.audio_digest(a) for a in (audio, nudged, audio.astype(np.float32), audio[None, :])
    }
    assert len(digests) == 4


def test_a_track_file_round_trips_bit_exactly_with_its_failures(tmp_path, speech):
    short = speech[0][:800]  # 50 ms: shorter than one CPPS analysis window
    audios = {"a": speech[0], "b": speech[1], "short": short}
    rows = [track_row(tracks.CPPS, utt, audio, SAMPLE_RATE) for utt, audio in audios.items()]
    rows += [track_row(tracks.PITCH, utt, audio, SAMPLE_RATE) for utt, audio in audios.items()]
    assert [row["outcome"] for row in rows[:3]] == [VALUE, VALUE, NO_SCORE]
    write_track(rows[:3], tmp_path / "cpps.parquet", tracks.CPPS, "raw")
    write_track(rows[3:], tmp_path / "pitch.parquet", tracks.PITCH, "raw")
    expected = {utt: pitch_track(audio, SAMPLE_RATE) for utt, audio in audios.items()}
    with pytest.raises(NoScore) as computed_failure:
        tracks.cpps(short, SAMPLE_RATE)

    tracks.forget()
    assert load_tracks([tmp_path / "cpps.parquet", tmp_path / "pitch.parquet"]) == 6
    for utt, audio in audios.items():
        assert _bytes(pitch_track(audio, SAMPLE_RATE)) == _bytes(expected[utt])
    for utt in ("a", "b"):
        assert tracks.cpps(audios[utt], SAMPLE_RATE) == cepstral.cpps(audios[utt], SAMPLE_RATE)
    with pytest.raises(NoScore) as replayed:
        tracks.cpps(short, SAMPLE_RATE)
    assert (replayed.value.status, replayed.value.reason) == (
        TOO_SHORT,
        computed_failure.value.reason,
    )
    assert tracks.counts() == {("pitch", "reused"): 3, ("cpps", "reused"): 3}


def test_loading_for_some_utterances_leaves_the_other_rows_unread(tmp_path, speech):
    rows = [track_row(tracks.PITCH, utt, speech[k], SAMPLE_RATE) for k, utt in enumerate("ab")]
    write_track(rows, tmp_path / "pitch.parquet", tracks.PITCH, "raw")
    tracks.forget()
    assert load_tracks([tmp_path / "pitch.parquet"], utt_ids={"b", "not in the file"}) == 1
    pitch_track(speech[1], SAMPLE_RATE)
    pitch_track(speech[0], SAMPLE_RATE)
    assert tracks.counts() == {("pitch", "reused"): 1, ("pitch", "computed"): 1}


def _raises(audio: np.ndarray, fs: int) -> tuple[np.ndarray, ...]:
    raise ValueError("this analysis always fails")


def test_an_unexpected_error_is_recorded_but_never_replayed(tmp_path, speech):
    failing = tracks.Track("failing", ("x",), "none", f"{__name__}:_raises")
    row = track_row(failing, "a", speech[0], SAMPLE_RATE)
    assert (row["outcome"], row["reason"]) == (EXCEPTION, "ValueError: this analysis always fails")
    write_track([row], tmp_path / "failing.parquet", failing, "raw")
    assert load_tracks([tmp_path / "failing.parquet"]) == 0  # not a known track, nor a value


def test_stale_settings_in_a_file_are_not_loaded(tmp_path, speech):
    row = track_row(tracks.PITCH, "a", speech[0], SAMPLE_RATE)
    write_track(
        [row | {"settings": "an older analysis"}], tmp_path / "p.parquet", tracks.PITCH, "raw"
    )
    tracks.forget()
    assert load_tracks([tmp_path / "p.parquet"]) == 0
    pitch_track(speech[0], SAMPLE_RATE)
    assert tracks.counts() == {("pitch", "computed"): 1}


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a
    )


def test_consumers_give_identical_results_from_track_files(tmp_path, speech):
    items = [Item(name, "", language="en") for name in NAMES]

    def results() -> tuple:
        return (
            [StdPitchEvaluator().score_loaded(a) for a in speech],
            [CPPSEvaluator().score_loaded(a) for a in speech],
            F0RangeEvaluator().score_loaded(speech, items),
            VSAEvaluator().score_loaded(speech, items),
            [utterance_features(a, SAMPLE_RATE) for a in speech],
        )

    fresh = results()
    computed = tracks.counts()
    assert computed[("pitch", "computed")] == len(speech)  # once per utterance, for 5 consumers
    assert computed[("cpps", "computed")] == len(speech)  # once, for cpps and the features
    # once per utterance, for the features' speech rate and pause fraction (no track files)
    assert computed[("intensity", "computed")] == computed[("intensity", "reused")] == len(speech)
    for track in (tracks.PITCH, tracks.CPPS):
        rows = [
            track_row(track, name, a, SAMPLE_RATE) for name, a in zip(NAMES, speech, strict=True)
        ]
        write_track(rows, tmp_path / f"{track.name}.parquet", track, "raw")

    tracks.forget()
    load_tracks(sorted(tmp_path.glob("*.parquet")))
    reused = results()
    recomputed = {name for name, kind in tracks.counts() if kind == "computed"}
    assert recomputed == {"intensity"}  # the files' tracks came from the files
    assert reused[:4] == fresh[:4]
    assert all(_same(a, b) for a, b in zip(reused[4], fresh[4], strict=True))


def test_every_declared_track_exists(monkeypatch, tmp_path):
    """Fixed tracks are tracks of :data:`tracks.TRACKS`; a model measure declares its model's
    tracks, so without its model it declares none and fails as its preflight does (its tracks
    are tested with tiny models in test_neural)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    declared, without_model = {}, set()
    for name in registry.names():
        try:
            declared[name] = registry.info(name).cls.uses_tracks({})
        except ModelUnavailable:
            without_model.add(name)
    model_measures = {"artp", "artp_old", "artp_double_asr", "per", "dper", "double_asr", "nad"}
    assert without_model == model_measures
    assert declared["cpps"] == ("cpps",) and declared["std_pitch"] == ("pitch",)
    assert CPPSEvaluator.uses_tracks({"implementation": "praat"}) == ()
    assert registry.info("nad").cls.uses_tracks({"features": "mfcc"}) == ("nad_mfcc",)
    for names in [*declared.values(), tracks.OPENSET_FEATURE_TRACKS]:
        assert set(names) <= set(tracks.TRACKS), names


# The intensity track and the one Burg formant analysis: the same values as the direct Praat
# calls they replace, bit for bit, and the intensity contour analysed once per utterance.

VARIED = ("syllables", "test_audio", "BLUE_english32")


@pytest.fixture(scope="module")
def varied() -> list[np.ndarray]:
    """Four syllables a second framed by pauses, a steady harmonic tone, a spoken word."""
    return [syllables(4.0, 3.0)] + [load_audio(FIXTURES / f"{name}.wav") for name in VARIED[1:]]


def _sound(audio: np.ndarray) -> parselmouth.Sound:
    return parselmouth.Sound(np.asarray(audio, dtype=np.float64), sampling_frequency=SAMPLE_RATE)


def test_the_intensity_track_is_praats_contour_bit_for_bit(varied):
    for audio in varied:
        direct = _sound(audio).to_intensity(minimum_pitch=50.0)
        times, db = tracks.value(tracks.INTENSITY, audio, SAMPLE_RATE)
        assert times.tobytes() == np.asarray(direct.xs()).tobytes()
        assert db.tobytes() == np.asarray(direct.values[0]).tobytes()
        assert db.size > 5  # a real contour, not the empty value of a too short signal


def test_speech_rate_and_pause_fraction_share_one_intensity_analysis(varied):
    audio = varied[0]
    rate = speech_rate.speech_rate(audio, SAMPLE_RATE)
    pauses = speech_rate.pause_fraction(audio, SAMPLE_RATE)
    assert tracks.counts()[("intensity", "computed")] == 1
    assert tracks.counts()[("intensity", "reused")] == 1
    assert rate > 2 and 0 < pauses < 1
    speech_rate.pause_fraction(varied[1], SAMPLE_RATE)  # other audio: a miss
    assert tracks.counts()[("intensity", "computed")] == 2


def test_intensity_from_a_track_file_gives_the_same_measures(tmp_path, varied):
    fresh = [
        (speech_rate.speech_rate(a, SAMPLE_RATE), speech_rate.pause_fraction(a, SAMPLE_RATE))
        for a in varied
    ]
    rows = [
        track_row(tracks.INTENSITY, name, a, SAMPLE_RATE)
        for name, a in zip(VARIED, varied, strict=True)
    ]
    assert {row["outcome"] for row in rows} == {VALUE}
    write_track(rows, tmp_path / "intensity.parquet", tracks.INTENSITY, "raw")
    tracks.forget()
    assert load_tracks([tmp_path / "intensity.parquet"]) == len(varied)
    again = [
        (speech_rate.speech_rate(a, SAMPLE_RATE), speech_rate.pause_fraction(a, SAMPLE_RATE))
        for a in varied
    ]
    assert again == fresh
    assert ("intensity", "computed") not in tracks.counts()


def test_audio_shorter_than_an_intensity_window_has_no_nuclei_and_no_pause(varied):
    short = varied[0][:400]  # 25 ms, below the 64 ms window of a 50 Hz floor
    with pytest.raises(parselmouth.PraatError):
        _sound(short).to_intensity(minimum_pitch=50.0)
    times, db = tracks.value(tracks.INTENSITY, short, SAMPLE_RATE)
    assert times.size == db.size == 0
    assert speech_rate.speech_rate(short, SAMPLE_RATE) == 0.0
    assert speech_rate.pause_fraction(short, SAMPLE_RATE) == 0.0
    assert tracks.counts()[("intensity", "computed")] == 1


@pytest.mark.parametrize("ceiling", [5000.0, 5500.0])
def test_burg_formants_are_the_direct_burg_analysis_bit_for_bit(varied, ceiling):
    for audio in varied:
        # as vsa_corners (Praat's default of five formants) and the open-set features
        # (five formants stated) called it before they shared it
        defaults = _sound(audio).to_formant_burg(time_step=0.01, maximum_formant=ceiling)
        stated = _sound(audio).to_formant_burg(
            time_step=0.01, max_number_of_formants=5, maximum_formant=ceiling
        )
        times, formants = vsa.burg_formants(audio, SAMPLE_RATE, ceiling, 4)
        assert formants.shape == (len(times), 4)
        for formant in (defaults, stated):
            assert times.tobytes() == np.asarray(formant.xs()).tobytes()
            for k in range(4):
                direct = call(formant, "To Matrix", k + 1).values[0]
                assert formants[:, k].tobytes() == direct.tobytes()
        assert np.all(formants[:, :2] >= 0) and np.any(formants[:, 1] > formants[:, 0])
        two = vsa.burg_formants(audio, SAMPLE_RATE, ceiling, 2)[1]
        assert two.tobytes() == np.ascontiguousarray(formants[:, :2]).tobytes()


def test_pooled_points_stack_every_utterance_and_none_gives_an_empty_set(varied):
    def per_sample(audio, fs, track, ceiling):
        return np.full((len(audio), 2), ceiling)

    no_pitch = (np.zeros(2), np.zeros(2))
    audios = [varied[0][:3], varied[1][:2]]
    pooled = vsa.pooled_points(per_sample, audios, SAMPLE_RATE, [no_pitch] * 2, 5000.0)
    assert pooled.shape == (5, 2) and np.all(pooled == 5000.0)
    assert vsa.pooled_points(per_sample, [], SAMPLE_RATE, [], 5000.0).shape == (0, 2)


def test_an_fa_track_reads_the_raw_values_of_recordings_trimming_left_whole(tmp_path):
    """Trimmed utterances are analysed; the ones trimming kept whole (a fallback) come from
    the raw file, and the fa file is the one the job writes without it, byte for byte."""
    import pandas as pd

    from pathbench_flow.common.io import write_parquet
    from pathbench_flow.schemas.tables import TRIM_SCHEMA
    from pathbench_flow.stages.tracks import compute_track
    from pathbench_flow.stages.validate import validate_dataset

    manifest = tmp_path / "manifest.parquet"
    data = build_tone_dataset(tmp_path / "data")
    validate_dataset(data, manifest, tmp_path / "validation.json", n_shards=1)
    utts = sorted(pd.read_parquet(manifest)["utt_id"])
    trims = tmp_path / "trim.parquet"
    rows = [
        (utt, "energy", "energy", 0.2, 0.8, 0, "")
        if k % 2
        else (utt, "pocketsphinx", "failed_fallback", 0.0, 1.0, 0, "implausible alignment")
        for k, utt in enumerate(utts)
    ]
    write_parquet(pd.DataFrame(rows, columns=TRIM_SCHEMA.names), trims, TRIM_SCHEMA, ["utt_id"])
    for track in ("pitch", "cpps"):
        tracks.forget()
        raw = tmp_path / f"{track}-raw.parquet"
        compute_track([manifest], track, "raw", raw)
        tracks.forget()
        alone = tmp_path / f"{track}-fa-alone.parquet"
        compute_track([manifest], track, "fa", alone, trim_paths=[trims])
        assert tracks.counts() == {(track, "computed"): 4}
        tracks.forget()
        reading = tmp_path / f"{track}-fa.parquet"
        compute_track([manifest], track, "fa", reading, trim_paths=[trims], raw_paths=[raw])
        assert tracks.counts() == {(track, "computed"): 2, (track, "reused"): 2}
        assert reading.read_bytes() == alone.read_bytes()
    with pytest.raises(ValueError, match="only an fa track"):
        compute_track([manifest], "pitch", "raw", tmp_path / "x.parquet", raw_paths=[raw])


SMALL_RUN = {
    "demo": {"n_pathological": 4, "n_control": 1, "n_utterances": 2},
    "datasets": {"demo": {"path": "resources/demo/pathological", "trim_backend": "energy"}},
    "evaluators": ["std_pitch"],
    "variants": ["raw"],
    "shard_size": 4,
    "openset": {"enabled": False},
}


def _jobs(plan: str) -> set[str]:
    """Names of the rules with a job in a dry run's plan."""
    return set(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):", plan, flags=re.MULTILINE))


@pytest.mark.slow
def test_track_files_are_job_inputs_and_a_new_consumer_reruns_no_track_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    (workdir / "small.yaml").write_text(yaml.safe_dump(SMALL_RUN))
    snakemake(workdir, "--cores", "2", "--configfile", "small.yaml")
    track_dir = workdir / "results/demo/tracks/pitch/raw"
    assert sorted(p.name for p in track_dir.iterdir()) == ["0000.parquet", "0001.parquet"]
    logs = sorted((workdir / "logs/demo/score_utterances/std_pitch").glob("*.log"))
    assert len(logs) == 2
    for log in logs:  # every pitch track came from the track file, none was recomputed
        assert "tracks: pitch 4 reused, 0 computed" in log.read_text(), log.read_text()

    # f0_range reads the pitch files; speech_rate reads them too, and its intensity track is
    # shared within its job only: neither plans a track job
    extended = SMALL_RUN | {"evaluators": ["std_pitch", "f0_range", "speech_rate"]}
    (workdir / "extended.yaml").write_text(yaml.safe_dump(extended))
    plan = snakemake(workdir, "-n", "--configfile", "extended.yaml").stdout
    assert {"score_speakers", "score_utterances"} <= _jobs(plan)
    assert "compute_track" not in _jobs(plan), plan
    outputs = set(re.findall(r"^\s+output: (\S+)$", plan, flags=re.MULTILINE))
    assert {path for path in outputs if "/scores/" in path} == {
        "results/demo/scores/speech_rate/0000.parquet",
        "results/demo/scores/speech_rate/0001.parquet",
    }
    # another config file's run in the same results/: replacing the first run's tables is said
    snakemake(
        workdir, "--cores", "2", "--configfile", "extended.yaml", "--config", "replace_results=True"
    )
    for log in sorted((workdir / "logs/demo/score_utterances/speech_rate").glob("*.log")):
        # pitch from the files; intensity once per utterance, in the job
        assert "tracks: intensity 0 reused, 4 computed; pitch 4 reused, 0 computed" in (
            log.read_text()
        ), log.read_text()

    (track_dir / "0001.parquet").unlink()  # rebuilt, so its consumer (only) reruns
    plan = snakemake(workdir, "-n", "--configfile", "small.yaml").stdout
    outputs = set(re.findall(r"^\s+output: (\S+)$", plan, flags=re.MULTILINE))
    assert {
        "results/demo/tracks/pitch/raw/0001.parquet",
        "results/demo/scores/std_pitch/0001.parquet",
    } <= outputs
    assert (
        not {
            "results/demo/tracks/pitch/raw/0000.parquet",
            "results/demo/scores/std_pitch/0000.parquet",
        }
        & outputs
    )
