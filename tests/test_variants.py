"""One variant mechanism: metric names derived from (evaluator, variant, reference type) in one
place, and variants applied by the scoring stage through ``evaluator.trimmed``."""

from __future__ import annotations

import pandas as pd
import pytest

from pathbench_flow.common.audio import load_audio
from pathbench_flow.common.io import write_parquet
from pathbench_flow.common.status import ENERGY_TRIMMED, FAILED_FALLBACK, TRIM_FAILED
from pathbench_flow.data.manifest import load_manifest
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.metric import FA, RAW, MetricKey
from pathbench_flow.schemas.tables import TRIM_SCHEMA
from pathbench_flow.stages.score import score_reference, score_speakers, score_utterances
from pathbench_flow.stages.validate import validate_dataset
from pathbench_flow.testing.kaldi_builder import build_dataset


@pytest.mark.parametrize(
    ("key", "name"),
    [
        (MetricKey("cpp"), "cpp"),
        (MetricKey("cpp", FA), "cpp_fa"),
        (MetricKey("p_estoi", RAW, "control"), "p_estoi_control"),
        (MetricKey("p_estoi", FA, "control"), "p_estoi_fa_control"),
        (MetricKey("nad", FA, "all"), "nad_fa_all"),
    ],
)
def test_metric_names_are_pathbench_names(key: MetricKey, name: str) -> None:
    assert key.name == name


def test_a_metric_key_refuses_unknown_parts() -> None:
    with pytest.raises(ValueError, match="unknown variant 'trimmed'; known: raw, fa"):
        MetricKey("cpp", "trimmed")
    with pytest.raises(ValueError, match="unknown reference type 'healthy'"):
        MetricKey("nad", RAW, "healthy")


def test_fa_variants_are_not_registered_as_evaluators() -> None:
    names = set(registry.names())
    assert not {"p_estoi_fa", "nad_fa"} & names
    assert registry.info("p_estoi").trimmable and registry.info("nad").trimmable
    assert not registry.info("sphinx_wer").trimmable


@pytest.fixture
def manifest(tmp_path):
    """A validated dataset of two speakers saying the same two texts: each utterance has the
    other speaker's as its one ``all`` reference."""
    path = tmp_path / "manifest.parquet"
    validate_dataset(build_dataset(tmp_path / "d"), path, tmp_path / "v.json", n_shards=1)
    return path


def _trim_table(manifest, path, status: str):
    """Stored boundaries covering each whole utterance, with ``status``."""
    frame = load_manifest(manifest)
    durations = [len(load_audio(p)) / 16000 for p in frame["audio_path"]]
    table = pd.DataFrame(
        {
            "utt_id": frame["utt_id"],
            "backend": "energy",
            "status": status,
            "trim_start_s": 0.0,
            "trim_end_s": durations,
            "n_words_aligned": 0,
            "message": "",
        }
    )
    write_parquet(table, path, TRIM_SCHEMA, ["utt_id"])
    return path


def _identity_holds(frame: pd.DataFrame) -> bool:
    keys = zip(frame["evaluator"], frame["variant"], frame["reference_type"], strict=True)
    return list(frame["metric"]) == [MetricKey(*key).name for key in keys]


def test_the_stage_applies_the_fa_variant_of_a_reference_measure(manifest, tmp_path):
    """The fa rows keep the evaluator's name and come from its trimming wrapper: whole-utterance
    trims reproduce the raw NAD exactly, failed trims give P-ESTOI's trim_failed rows."""
    good = [_trim_table(manifest, tmp_path / "good.parquet", ENERGY_TRIMMED)]
    failed = [_trim_table(manifest, tmp_path / "failed.parquet", FAILED_FALLBACK)]
    options = {"features": "mfcc"}
    raw = score_reference(
        manifest, None, 0, "nad", "all", tmp_path / "raw.parquet", options=options
    )
    fa = score_reference(
        manifest,
        None,
        0,
        "nad",
        "all",
        tmp_path / "fa.parquet",
        options=options,
        variant=FA,
        trim_paths=good,
    )
    assert set(raw["metric"]) == {"nad_all"} and set(fa["metric"]) == {"nad_fa_all"}
    assert set(fa["evaluator"]) == {"nad"} and set(fa["variant"]) == {FA}
    assert _identity_holds(raw) and _identity_holds(fa)
    assert (fa["status"] == "ok").all()
    assert fa["score"].tolist() == raw["score"].tolist()

    estoi = score_reference(
        manifest, None, 0, "p_estoi", "all", tmp_path / "e.parquet", variant=FA, trim_paths=failed
    )
    assert set(estoi["metric"]) == {"p_estoi_fa_all"} and _identity_holds(estoi)
    assert (estoi["status"] == TRIM_FAILED).all() and (estoi["score"] == 0.0).all()


def test_a_variant_the_stage_cannot_apply_is_refused(manifest, tmp_path):
    test = manifest
    with pytest.raises(ValueError, match="variant 'fa' needs the fa_trim tables"):
        score_reference(test, None, 0, "p_estoi", "all", tmp_path / "x.parquet", variant=FA)
    with pytest.raises(ValueError, match="unknown variant 'trimmed'"):
        score_utterances(test, 0, "cpp", tmp_path / "y.parquet", variants=("trimmed",))
    trims = [_trim_table(test, tmp_path / "t.parquet", ENERGY_TRIMMED)]
    with pytest.raises(TypeError, match="sphinx_wer has no trimmed variant"):
        score_utterances(
            test, 0, "sphinx_wer", tmp_path / "z.parquet", variants=(FA,), trim_paths=trims
        )


def test_utterance_and_speaker_rows_name_their_variant(manifest, tmp_path):
    test = manifest
    trims = [_trim_table(test, tmp_path / "t.parquet", ENERGY_TRIMMED)]
    both = (RAW, FA)
    utterances = score_utterances(
        test, 0, "wpm", tmp_path / "w.parquet", variants=both, trim_paths=trims
    )
    speakers = score_speakers(
        test, "f0_range", tmp_path / "f.parquet", variants=both, trim_paths=trims
    )
    for frame, evaluator in ((utterances, "wpm"), (speakers, "f0_range")):
        assert set(frame["evaluator"]) == {evaluator}
        names = dict(zip(frame["variant"], frame["metric"], strict=False))
        assert names == {RAW: evaluator, FA: f"{evaluator}_fa"}
    # whole-utterance trims: the trimmed variant equals the raw one
    rates = utterances.pivot(index="utt_id", columns="variant", values="score")
    assert rates[FA].tolist() == rates[RAW].tolist()
