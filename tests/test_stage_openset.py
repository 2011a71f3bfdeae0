"""The open-set rules' functions (pathbench_flow.stages.openset), called as the workflow calls them:
features per shard from real recordings, then folds → candidate counts per tuning fold →
selection → held-out score → summary, each reading the files the previous one wrote."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from pathbench_flow.common.io import read_parquet, write_parquet
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.openset.evaluate import CONFIG_COLUMNS, candidate_grid
from pathbench_flow.openset.types import ModelConfig
from pathbench_flow.schemas.openset import FEATURE_SCHEMA, SCHEMA_ID, mask_from_names
from pathbench_flow.stages.openset import (
    RATES,
    fit_candidates,
    fold_counts,
    heldout_score,
    openset_features,
    openset_folds,
    openset_summary,
    select_config,
)
from pathbench_flow.stages.trim import fa_trim
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing import RECORDINGS as AUDIO
from pathbench_flow.testing.kaldi_builder import write_lines
from pathbench_flow.testing.openset_frames import STAGE_GRID as GRID
from pathbench_flow.testing.openset_frames import speaker_frame, summary_paths


# ------------------------------------------------------------------ openset_features
@pytest.fixture(scope="module")
def blue_manifest(tmp_path_factory) -> Path:
    """PathBench's own test case as a dataset: four speakers saying "blue" (real recordings),
    one of them again between half-second silences, and the synthetic harmonic tone; two
    shards."""
    root = tmp_path_factory.mktemp("blue")
    names = ["BLUE_english32", "BLUE_english33", "BLUE_english34", "BLUE_japanese10"]
    audio = {f"spk{k}_blue": AUDIO / f"{name}.wav" for k, name in enumerate(names)}
    audio["spk4_tone"] = AUDIO / "test_audio.wav"
    word, rate = sf.read(AUDIO / "BLUE_english32.wav")
    silence = np.zeros(rate // 2)
    audio["spk5_padded"] = root / "padded.wav"
    sf.write(audio["spk5_padded"], np.concatenate([silence, word, silence]), rate, "PCM_16")
    write_lines(root / "wav.scp", [f"{utt} {path}" for utt, path in audio.items()])
    write_lines(root / "text", [f"{utt} blue" for utt in audio])
    write_lines(root / "utt2spk", [f"{utt} {utt.split('_')[0]}" for utt in audio])
    write_lines(root / "spk2score", [f"spk{k} {50 + k}" for k in range(6)])
    write_lines(root / "spk2gender", [f"spk{k} m" for k in range(6)])
    write_lines(root / "language", ["en"])
    manifest = root / "manifest.parquet"
    validate_dataset(root, manifest, root / "validation.json", n_shards=2)
    return manifest


def test_features_one_row_per_utterance_of_the_shard(blue_manifest, tmp_path):
    shard = load_manifest(blue_manifest, 1)
    out = tmp_path / "features.parquet"
    frame = openset_features(blue_manifest, 1, out)
    assert list(frame.columns) == FEATURE_SCHEMA.names
    assert (
        frame["utt_id"].tolist()
        == shard["utt_id"].tolist()
        == ["spk3_blue", "spk4_tone", "spk5_padded"]
    )
    assert frame["group_id"].tolist() == shard["group_id"].tolist()
    assert pq.read_table(out).schema.remove_metadata() == FEATURE_SCHEMA
    assert read_parquet(out).equals(frame)
    # The tone is 110 Hz harmonics: its median F0 is measured, not left NaN.
    tone = frame.set_index("utt_id").loc["spk4_tone"]
    assert tone["f0_median_hz"] == pytest.approx(110.0, rel=0.02)
    first = out.read_bytes()
    openset_features(blue_manifest, 1, out)
    assert out.read_bytes() == first, "a rerun must write the same bytes"


def test_features_on_trimmed_audio(blue_manifest, tmp_path):
    """With trim tables the features describe the speech span; where the span is the whole
    file, or trimming failed and the stage fell back to the plain load, nothing changes."""
    trim = tmp_path / "trim.parquet"
    spans = fa_trim(blue_manifest, None, trim, {"backend": "energy"}).set_index("utt_id")
    duration = load_manifest(blue_manifest).set_index("utt_id")["duration_s"]
    for shard in (0, 1):
        plain = openset_features(blue_manifest, shard, tmp_path / f"plain{shard}.parquet")
        trimmed = openset_features(blue_manifest, shard, tmp_path / f"t{shard}.parquet", [trim])
        assert trimmed["utt_id"].tolist() == plain["utt_id"].tolist()
        digests = [
            pq.read_schema(tmp_path / name).metadata[b"pathbench.config_digest"]
            for name in (f"plain{shard}.parquet", f"t{shard}.parquet")
        ]
        assert digests[0] != digests[1], "the file must say whether its audio was trimmed"
        for (utt, before), (_, after) in zip(
            plain.set_index("utt_id").iterrows(),
            trimmed.set_index("utt_id").iterrows(),
            strict=True,
        ):
            start, end = spans.loc[utt, ["trim_start_s", "trim_end_s"]]
            cut = start > 0 or end < duration[utt] - 1e-9
            assert before.equals(after) != cut, utt
    assert spans.loc["spk5_padded", "trim_end_s"] - spans.loc["spk5_padded", "trim_start_s"] < 0.6


# ------------------------------------------------- folds, counts, selection, held-out
def feature_files(directory: Path) -> list[Path]:
    """Feature files as ``openset_features`` writes them, split over two shards: five
    Gaussian speakers × four recording groups × three utterances, and one row whose
    features could not be measured (NaN), which the stage must leave out and count."""
    unmeasured = {"utt_id": "u099", "speaker_id": "spk0", "group_id": "spk0-g9"}
    frame = pd.concat([speaker_frame(), pd.DataFrame([unmeasured])], ignore_index=True)
    paths = []
    for shard, part in enumerate((frame.iloc[::2], frame.iloc[1::2])):
        path = directory / f"features_{shard}.parquet"
        write_parquet(part, path, FEATURE_SCHEMA, ["utt_id"])
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> dict[str, object]:
    """Run every open-set rule once, in the workflow's order, keeping the paths."""
    root = tmp_path_factory.mktemp("openset")
    features = feature_files(root)
    folds = root / "folds.json"
    plan = openset_folds(features, folds, known_folds=2, max_outer_folds=2, max_tuning_folds=2)
    counts, selected, heldout = {}, [], []
    for outer, n_tuning in enumerate(fold_counts(folds)):
        counts[outer] = []
        for tuning in range(n_tuning):
            path = root / f"counts_{outer}_{tuning}.parquet"
            fit_candidates(features, folds, outer, tuning, GRID, path)
            counts[outer].append(path)
        selected.append(root / f"selected_{outer}.json")
        select_config(counts[outer], selected[-1])
        heldout.append(root / f"heldout_{outer}.json")
        heldout_score(features, folds, outer, selected[-1], heldout[-1])
    outputs = summary_paths(root)
    summary = openset_summary(folds, heldout, *outputs, {})
    return {
        "root": root,
        "features": features,
        "folds": folds,
        "plan": plan,
        "counts": counts,
        "selected": selected,
        "heldout": heldout,
        "summary": summary,
        "outputs": outputs,
    }


def test_folds_record_the_rows_they_index(chain):
    plan = json.loads(chain["folds"].read_text())
    assert plan == chain["plan"]
    assert plan["schema"] == SCHEMA_ID and plan["n_active_rows"] == 60
    assert plan["status"] == "applicable" and plan["reason"] == ""
    assert plan["n_utterances"] == 61 and plan["skipped_outer_folds"] == []
    spk0 = plan["speakers"][0]
    assert spk0["speaker_id"] == "spk0" and spk0["n_excluded"] == 1
    assert "1 of 13 utterances left out" in spk0["note"]
    assert all(r["n_excluded"] == 0 and r["note"] == "" for r in plan["speakers"][1:])
    assert len(plan["outer_folds"]) == 2 == len(fold_counts(chain["folds"]))
    for outer in plan["outer_folds"]:
        held = outer["held_out"]
        indices = held["train"] + held["known_test"] + held["unknown_test"]
        assert len(set(indices)) == len(indices) and max(indices) < 60
        assert 1 <= len(outer["tuning"]) <= 2


def test_candidate_counts_cover_the_grid_in_config_order(chain):
    table = read_parquet(chain["counts"][0][0])
    assert len(table) == len(candidate_grid(GRID))
    configs = table[list(CONFIG_COLUMNS)]
    assert configs.equals(configs.sort_values(list(CONFIG_COLUMNS)).reset_index(drop=True))
    assert (table["known_total"] > 0).all() and (table["unknown_total"] > 0).all()


def test_selection_and_held_out_score_use_a_grid_candidate(chain):
    grid = set(candidate_grid(GRID))
    for outer, (selected, heldout) in enumerate(
        zip(chain["selected"], chain["heldout"], strict=True)
    ):
        choice = json.loads(selected.read_text())
        assert ModelConfig(**choice["selected"]) in grid
        assert choice["n_candidates"] == len(grid)
        assert choice["n_tuning_folds"] == len(chain["counts"][outer])
        result = json.loads(heldout.read_text())
        assert result["outer"] == outer and result["config"] == choice["selected"]
        assert set(result["rates"]) == set(RATES)
        counts = result["counts"]
        assert counts["known_total"] == (
            counts["known_correct"] + counts["known_misidentified"] + counts["known_rejected"]
        )


def test_summary_pools_the_outer_folds(chain):
    summary = chain["summary"]
    json_path, csv_path, plot_path, status_path, speakers_path = chain["outputs"]
    assert json.loads(json_path.read_text()) == summary
    assert summary["n_outer_folds"] == 2 and summary["status"] == "applicable"
    assert summary["speakers"] == chain["plan"]["speakers"]
    status = pd.read_csv(status_path, keep_default_na=False)
    assert status.to_dict("records") == [
        {
            "status": "applicable",
            "reason": "",
            "n_utterances": 61,
            "n_excluded": 1,
            "n_speakers": 5,
            "n_outer_folds": 2,
            "skipped_outer_folds": "",
        }
    ]
    speakers = pd.read_csv(speakers_path, keep_default_na=False)
    assert speakers["speaker_id"].tolist() == [f"spk{k}" for k in range(5)]
    assert speakers["n_recording_groups"].tolist() == [4] * 5
    heldout = [json.loads(p.read_text()) for p in chain["heldout"]]
    assert summary["confusion"]["known_total"] == sum(h["counts"]["known_total"] for h in heldout)
    per_fold = pd.read_csv(csv_path)
    assert per_fold["outer"].tolist() == [0, 1]
    assert per_fold["config_mask"].tolist() == [c["mask"] for c in summary["selected_configs"]]
    features = per_fold.columns.get_loc("config_mask") + 1
    assert per_fold.columns[features] == "config_features"
    assert [mask_from_names(text.split("+")) for text in per_fold["config_features"]] == per_fold[
        "config_mask"
    ].tolist()
    assert plot_path.stat().st_size > 0


def test_every_open_set_output_is_byte_identical_on_a_rerun(chain, tmp_path):
    features, folds = chain["features"], tmp_path / "folds.json"
    openset_folds(features, folds, known_folds=2, max_outer_folds=2, max_tuning_folds=2)
    assert folds.read_bytes() == chain["folds"].read_bytes()
    counts = tmp_path / "counts.parquet"
    fit_candidates(features, folds, 0, 0, GRID, counts)
    assert counts.read_bytes() == chain["counts"][0][0].read_bytes()
    selected = tmp_path / "selected.json"
    select_config(chain["counts"][0], selected)
    assert selected.read_bytes() == chain["selected"][0].read_bytes()
    heldout = tmp_path / "heldout.json"
    heldout_score(features, folds, 0, selected, heldout)
    assert heldout.read_bytes() == chain["heldout"][0].read_bytes()
    outputs = summary_paths(tmp_path)
    openset_summary(folds, chain["heldout"], *outputs, {})
    for new, old in zip(outputs, chain["outputs"], strict=True):
        assert new.read_bytes() == old.read_bytes(), new.name


def test_changed_feature_rows_are_refused_against_old_folds(chain, tmp_path):
    """Folds are row indices: features that changed since the folds were built would
    silently point at other rows, so every later job checks the fingerprint."""
    features = feature_files(tmp_path)
    shard = read_parquet(features[1])
    write_parquet(shard.iloc[1:], features[1], FEATURE_SCHEMA, ["utt_id"])
    with pytest.raises(ValueError, match="rerun openset_folds"):
        fit_candidates(features, chain["folds"], 0, 0, GRID, tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="rerun openset_folds"):
        heldout_score(features, chain["folds"], 0, chain["selected"][0], tmp_path / "h.json")
