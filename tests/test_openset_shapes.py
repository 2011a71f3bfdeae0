"""Datasets the open-set evaluation cannot apply to, or applies to with unmeasured features:
the stage functions record why, as data, and every later stage still writes its outputs.

Two shapes from the real corpora: COPAS's word task (one recording per speaker, cut into words
by ``segments``), on which no fold can keep recording groups apart, and a most severe speaker
whose F0 cannot be measured (too little voicing), who must stay in the evaluation and be named.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pathbench_flow.common.io import write_parquet
from pathbench_flow.schemas.openset import FEATURE_NAMES, FEATURE_SCHEMA
from pathbench_flow.stages.openset import (
    PER_FOLD_COLUMNS,
    SPEAKER_COLUMNS,
    STATUS_COLUMNS,
    fit_candidates,
    fold_counts,
    heldout_score,
    openset_features,
    openset_folds,
    openset_summary,
    select_config,
)
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.copas_shaped import SPEAKERS, WORDS, write_copas_words
from pathbench_flow.testing.kaldi_builder import tone
from pathbench_flow.testing.openset_frames import STAGE_GRID, speaker_frame, summary_paths

SETTINGS = {"known_folds": 2, "max_outer_folds": 4, "max_tuning_folds": 3}
ONE_GROUP_REASON = (
    "every speaker's utterances come from one recording group (4 speakers, 4 recording groups, "
    "16 utterances), so no fold can keep groups apart and hold a speaker out"
)


def summarise(folds: Path, heldout: list[Path], directory: Path) -> dict:
    """Run ``openset_summary`` into ``directory``; the summary and every output's bytes."""
    outputs = summary_paths(directory)
    summary = openset_summary(folds, heldout, *outputs, {})
    return {"summary": summary, "bytes": {p.name: p.read_bytes() for p in outputs}}


@pytest.fixture(scope="module")
def copas(tmp_path_factory) -> dict:
    """A COPAS-word-shaped dataset validated, featurised in two shards, folded, summarised."""
    root = tmp_path_factory.mktemp("copas")
    data = write_copas_words(root / "data", lambda word, k: tone(0.5, freq=110.0 + 40.0 * k))
    manifest = root / "manifest.parquet"
    validate_dataset(data, manifest, root / "validation.json", n_shards=2)
    features = [root / f"features_{shard}.parquet" for shard in (0, 1)]
    for shard, path in enumerate(features):
        openset_features(manifest, shard, path)
    folds = root / "folds.json"
    plan = openset_folds(features, folds, **SETTINGS)
    return {"root": root, "features": features, "folds": folds, "plan": plan}


def test_copas_word_shape_is_not_applicable_with_the_reason(copas):
    plan = copas["plan"]
    assert plan["status"] == "not_applicable"
    assert plan["reason"].startswith(ONE_GROUP_REASON), plan["reason"]
    assert plan["outer_folds"] == [] and fold_counts(copas["folds"]) == []
    assert plan["n_utterances"] == plan["n_active_rows"] == len(SPEAKERS) * len(WORDS)
    assert [r["speaker_id"] for r in plan["speakers"]] == sorted(SPEAKERS)
    assert all(r["n_recording_groups"] == 1 for r in plan["speakers"])


def test_copas_word_shape_still_gets_every_summary_output(copas, tmp_path, capsys):
    """No held-out result: every table keeps its header, the reason is in the summary, the
    status table and the job log, and a rerun writes the same bytes."""
    first = summarise(copas["folds"], [], tmp_path)
    summary = first["summary"]
    assert summary["status"] == "not_applicable" and summary["reason"] == copas["plan"]["reason"]
    assert summary["n_outer_folds"] == 0 and summary["mean"] == summary["confusion"] == {}
    per_fold = pd.read_csv(tmp_path / "per_fold.csv")
    assert list(per_fold.columns) == list(PER_FOLD_COLUMNS) and per_fold.empty
    status = pd.read_csv(tmp_path / "status.csv", keep_default_na=False)
    assert list(status.columns) == list(STATUS_COLUMNS)
    assert status.loc[0, "status"] == "not_applicable"
    assert status.loc[0, "reason"] == copas["plan"]["reason"]
    assert status.loc[0, "n_speakers"] == len(SPEAKERS) and status.loc[0, "n_outer_folds"] == 0
    speakers = pd.read_csv(tmp_path / "speakers.csv", keep_default_na=False)
    assert list(speakers.columns) == list(SPEAKER_COLUMNS)
    assert speakers["speaker_id"].tolist() == sorted(SPEAKERS)
    assert (tmp_path / "rates.png").stat().st_size > 1000
    assert ONE_GROUP_REASON in capsys.readouterr().err
    again = summarise(copas["folds"], [], tmp_path / "again")
    assert again["bytes"] == first["bytes"]
    rebuilt = copas["root"] / "folds_again.json"
    openset_folds(copas["features"], rebuilt, **SETTINGS)
    assert rebuilt.read_bytes() == copas["folds"].read_bytes()


# ------------------------------------------------------------------ a most severe speaker
F0_FEATURES = (
    "f0_median_hz",
    "f0_std_st",
    "f0_range_st",
    "jitter_local",
    "shimmer_local_db",
    "h1_h2_db",
)
GRID_WITH_SPECTRUM = {
    **STAGE_GRID,
    "feature_masks": {"voice": list(FEATURE_NAMES[:8]), "spectrum": list(FEATURE_NAMES[15:21])},
}


@pytest.fixture(scope="module")
def severe(tmp_path_factory) -> dict:
    """Five speakers; spk4 has no measurable F0 (none of its 12 utterances voiced enough), and
    one of spk2's utterances has no measurable feature at all. Every rule runs once."""
    root = tmp_path_factory.mktemp("severe")
    frame = speaker_frame()
    frame.loc[frame["speaker_id"] == "spk4", list(F0_FEATURES)] = np.nan
    frame.loc[frame["utt_id"] == "u200", list(FEATURE_NAMES)] = np.nan
    active = sorted(frame["utt_id"][frame["utt_id"] != "u200"])
    features = [root / "features.parquet"]
    write_parquet(frame, features[0], FEATURE_SCHEMA, ["utt_id"])
    folds = root / "folds.json"
    plan = openset_folds(features, folds, known_folds=2, max_outer_folds=None, max_tuning_folds=2)
    heldout = []
    for outer, n_tuning in enumerate(fold_counts(folds)):
        counts = [root / f"counts_{outer}_{t}.parquet" for t in range(n_tuning)]
        for tuning, path in enumerate(counts):
            fit_candidates(features, folds, outer, tuning, GRID_WITH_SPECTRUM, path)
        select_config(counts, root / f"selected_{outer}.json")
        heldout.append(root / f"heldout_{outer}.json")
        heldout_score(features, folds, outer, root / f"selected_{outer}.json", heldout[-1])
    return {"root": root, "folds": folds, "plan": plan, "heldout": heldout, "active": active}


def test_a_speaker_without_f0_stays_in_and_is_named_with_the_reason(severe, tmp_path, capsys):
    plan = severe["plan"]
    assert plan["status"] == "applicable" and plan["n_active_rows"] == 59
    speakers = {r["speaker_id"]: r for r in plan["speakers"]}
    assert speakers["spk4"]["unmeasured"] == dict.fromkeys(F0_FEATURES, 12)
    assert speakers["spk4"]["n_excluded"] == 0 and speakers["spk4"]["note"].startswith("kept")
    assert speakers["spk2"]["n_excluded"] == 1
    assert speakers["spk2"]["note"].startswith("1 of 12 utterances left out")
    # spk4 is not dropped: it is a pseudo-unknown speaker of its own folds and known elsewhere
    held_out = [outer["held_out"] for outer in plan["outer_folds"]]
    assert "spk4" in {fold["pseudo_unknown_speaker"] for fold in held_out}

    summarise(severe["folds"], severe["heldout"], tmp_path)
    table = pd.read_csv(tmp_path / "speakers.csv", keep_default_na=False).set_index("speaker_id")
    expected = ", ".join(f"{name} 12/12" for name in F0_FEATURES)
    assert table.loc["spk4", "unmeasured_features"] == expected
    assert table.loc["spk2", "n_excluded"] == 1
    log = capsys.readouterr().err
    assert f"speaker spk4: unmeasured {expected}; kept" in log
    assert "speaker spk2: unmeasured none; 1 of 12 utterances left out" in log


def test_held_out_rows_the_selected_features_cannot_measure_are_counted(severe):
    plan = severe["plan"]
    voice_mask = (1 << 8) - 1
    spk4 = {i for i, utt in enumerate(severe["active"]) if utt.startswith("u4")}
    assert len(spk4) == 12
    for outer, path in enumerate(severe["heldout"]):
        result = json.loads(path.read_text())
        fold = plan["outer_folds"][outer]["held_out"]
        uses_f0 = result["config"]["mask"] == voice_mask
        assert result["unmeasured"] == {
            "known_unmeasured": len(spk4 & set(fold["known_test"])) if uses_f0 else 0,
            "unknown_unmeasured": len(spk4 & set(fold["unknown_test"])) if uses_f0 else 0,
        }
