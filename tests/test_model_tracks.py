"""Model outputs as shared tracks, on the tiny random models of test_neural.

The guarantees: each model runs once per recording however many measures read it (the phone
model for ArtP, Confidence and dPER; NAD's encoder for a recording that is test and reference),
the values are the same bit for bit whether they came from a track file or not, a track is
keyed by what its model is (not where it lies), and NAD's encoder cut after its layer gives
the full model's hidden layer exactly.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import soundfile as sf
import yaml
from test_neural import BLUE, options

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.audio import load_shared
from pathbench_flow.common.languages import LANGUAGES
from pathbench_flow.evaluators import registry
from pathbench_flow.evaluators.base import Item, evaluate_all
from pathbench_flow.neural import lm, model_tracks, models
from pathbench_flow.stages.score import score_utterances
from pathbench_flow.testing.kaldi_builder import build_tone_dataset
from pathbench_flow.testing.speech_fixtures import require_espeak
from pathbench_flow.testing.track_jobs import write_track_files
from pathbench_flow.tracks.store import load_tracks, track_rows, write_track

PHONE_READERS = ("artp", "artp_old", "dper")
NEURAL = (*PHONE_READERS, "per", "double_asr", "artp_double_asr")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, str]:
    """The tiny phone and character models and an n-gram LM, as :func:`options` reads them."""
    pytest.importorskip("torch", reason="model-based measures need the neural extra (torch)")
    pytest.importorskip("transformers", reason="model-based measures need transformers")
    require_espeak()
    from pathbench_flow.testing.tiny_models import build_char_model, build_phone_model, write_arpa

    root = tmp_path_factory.mktemp("models")
    return {
        "phone": str(build_phone_model(root / "phone")),
        "char": str(build_char_model(root / "char")),
        "lm": str(write_arpa(root / "lm.arpa", ["blue", "the", "cat", "water"])),
    }


@pytest.fixture(scope="module")
def items(tmp_path_factory) -> list[Item]:
    """Five English utterances of noise, 0.6 to 1.8 s long, and a spoken "blue"."""
    directory = tmp_path_factory.mktemp("audio")
    rng = np.random.default_rng(1)
    made = []
    for k, text in enumerate(("the cat", "blue water", "the water is blue", "cat", "blue")):
        path = directory / f"u{k}.wav"
        sf.write(path, 0.1 * rng.standard_normal(int((0.6 + 0.3 * k) * 16000)), 16000)
        made.append(Item(f"u{k}", str(path), transcription=text, language="en"))
    return [*made, Item("b", BLUE["japanese10"], transcription="blue", language="en")]


@pytest.fixture(autouse=True)
def empty_memo():
    tracks.forget()
    yield
    tracks.forget()


@pytest.fixture
def forward_passes(monkeypatch) -> Counter:
    """Audios that went through a network: per CTC model directory, and ``"encoder"``."""
    passes: Counter = Counter()
    run, hidden = models.CTCModel._run, models.Encoder.hidden

    def counted_run(self, audios):
        passes[self.directory] += len(audios)
        return run(self, audios)

    def counted_hidden(self, audio):
        passes["encoder"] += 1
        return hidden(self, audio)

    monkeypatch.setattr(models.CTCModel, "_run", counted_run)
    monkeypatch.setattr(models.Encoder, "hidden", counted_hidden)
    return passes


def _phone_dir(tiny) -> str:
    return str(Path(tiny["phone"]).resolve())


@contextmanager
def counted_decodes() -> Iterator[Counter]:
    """n-gram beam searches (``"n"``) while the context is open."""
    decodes: Counter = Counter()
    decode = lm.LMDecoder.decode

    def counted(self, log_posteriors):
        decodes["n"] += 1
        return decode(self, log_posteriors)

    with mock.patch.object(lm.LMDecoder, "decode", counted):
        yield decodes


def test_double_asr_and_dartp_run_the_beam_search_once_per_utterance(tiny, items):
    alone = {}
    for name in ("double_asr", "artp_double_asr"):
        tracks.forget()
        with counted_decodes() as decodes:
            alone[name] = evaluate_all(registry.create(name, **options(tiny, name)), items)
        assert decodes["n"] == len(items), name

    tracks.forget()
    with counted_decodes() as decodes:
        together = {
            name: evaluate_all(registry.create(name, **options(tiny, name)), items)
            for name in ("double_asr", "artp_double_asr")
        }
    assert together == alone and all(s.status == "ok" for s in together["double_asr"])
    assert decodes["n"] == len(items)


def test_an_n_gram_transcription_survives_its_track_file_exactly(tmp_path):
    text = "ʃ blue  wáter \u00e9\U0001f600 "
    assert model_tracks.arrays_text(model_tracks.text_arrays(text)) == text
    assert model_tracks.arrays_text(model_tracks.text_arrays("")) == ""


def test_artp_dper_and_confidence_run_the_phone_model_once_per_utterance(
    tiny, items, forward_passes
):
    alone = {}
    for name in PHONE_READERS:
        tracks.forget()
        alone[name] = evaluate_all(registry.create(name, **options(tiny, name)), items)
    assert forward_passes[_phone_dir(tiny)] == 3 * len(items)  # each measure on its own

    tracks.forget()
    forward_passes.clear()
    together = {
        name: evaluate_all(registry.create(name, **options(tiny, name)), items)
        for name in PHONE_READERS
    }
    assert together == alone and all(s.status == "ok" for s in together["artp"])
    assert forward_passes == {_phone_dir(tiny): len(items)}
    track = model_tracks.ctc_track(_phone_dir(tiny))
    assert tracks.counts() == {
        (track.name, "computed"): len(items),
        (track.name, "reused"): 2 * len(items),
    }


def test_measures_naming_one_model_declare_one_track_for_the_languages_they_score(tiny):
    def uses(name, **extra):
        return registry.info(name).cls.track_uses(options(tiny, name) | extra)

    phone = model_tracks.ctc_track(_phone_dir(tiny))
    char = model_tracks.ctc_track(str(Path(tiny["char"]).resolve()))
    assert phone.name != char.name and phone.runs_model and phone.batched
    assert uses("artp") == (tracks.TrackUse(phone, tuple(sorted(LANGUAGES)), 8),)
    assert uses("dper", batch_size=2) == (tracks.TrackUse(phone, tuple(sorted(LANGUAGES)), 2),)
    assert uses("artp_old") == (tracks.TrackUse(phone, None, 8),)  # every language
    assert uses("per") == (tracks.TrackUse(char, ("en", "nl"), 8),)  # one model, two languages
    decoded = model_tracks.lm_track(str(Path(tiny["char"]).resolve()), tiny["lm"])
    assert decoded.sources == (char.name,) and decoded.runs_model and decoded.batched
    assert uses("double_asr") == (  # only nl has no LM
        tracks.TrackUse(char, ("en",), 8),
        tracks.TrackUse(decoded, ("en",), 8),
    )
    assert uses("artp_double_asr") == (  # the ASR outputs only as the decoding's source
        tracks.TrackUse(phone, ("en",), 8),
        tracks.TrackUse(char, ("en",), 8, read=False),
        tracks.TrackUse(decoded, ("en",), 8),
    )
    assert registry.info("artp_double_asr").cls.uses_tracks(options(tiny, "artp_double_asr")) == (
        phone.name,
        decoded.name,
    )
    assert uses("artp_double_asr", lm=None) == ()  # nothing is read without an LM
    merged = tracks.merge_uses(
        [*uses("artp"), *uses("dper", batch_size=2), *uses("artp_old"), *uses("per")]
    )
    assert merged == {
        phone.name: tracks.TrackUse(phone, None, 2),
        char.name: tracks.TrackUse(char, ("en", "nl"), 8),
    }
    nad = registry.info("nad").cls
    ten, three = (nad.uses_tracks({"model": tiny["phone"], "layer": n}) for n in (None, 3))
    assert ten == (model_tracks.hidden_track(_phone_dir(tiny), 10).name,) and ten != three
    assert ten[0].startswith("wav2vec2_layer10-") and three[0].startswith("wav2vec2_layer3-")


def test_a_model_is_identified_by_its_files_never_by_its_path(tiny, tmp_path, monkeypatch):
    from pathbench_flow.testing.tiny_models import as_hf_cache

    original = model_tracks.model_identity(tiny["phone"])
    copy = Path(shutil.copytree(tiny["phone"], tmp_path / "copy"))  # copy2 keeps the mtimes
    snapshot = as_hf_cache(Path(tiny["phone"]), tmp_path / "cache", "tiny/other")
    assert model_tracks.model_identity(copy) == model_tracks.model_identity(snapshot) == original
    config = (copy / "config.json").read_text()
    (copy / "config.json").write_text(config.replace('"hidden_act"', '"hidden_act" '))
    assert model_tracks.model_identity(copy) != original  # a small file counts by its bytes
    (copy / "config.json").write_text(config)
    assert model_tracks.model_identity(copy) == original

    weights = copy / "model.safetensors"
    monkeypatch.setattr(model_tracks, "SMALL_FILE_BYTES", weights.stat().st_size - 1)
    large = model_tracks.model_identity(copy)  # the weights count by size and mtime
    assert large == model_tracks.model_identity(tiny["phone"]) != original
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # rewritten, same size
    assert model_tracks.model_identity(copy) != large


def _manifest(tmp_path: Path) -> Path:
    from pathbench_flow.stages.validate import validate_dataset

    path = tmp_path / "manifest.parquet"
    validate_dataset(
        build_tone_dataset(tmp_path / "data"), path, tmp_path / "validation.json", n_shards=1
    )
    return path


def test_track_files_give_every_model_measure_its_values_bit_for_bit(
    tiny, tmp_path, forward_passes
):
    """As the workflow runs it: one track job per model, then each measure's job reading the
    files runs no model and writes the table it writes without them, byte for byte."""
    manifest = _manifest(tmp_path)
    without = {}
    for name in NEURAL:
        tracks.forget()
        output = tmp_path / "alone" / f"{name}.parquet"
        without[name] = score_utterances(manifest, 0, name, output, options=options(tiny, name))
    planned = tracks.merge_uses(
        use for name in NEURAL for use in registry.info(name).cls.track_uses(options(tiny, name))
    )
    assert len(planned) == 3  # the phone model, the character model and its LM decoding
    forward_passes.clear()
    with counted_decodes() as decodes:
        files, rows = write_track_files(manifest, planned, tmp_path / "tracks")
    assert set(rows.values()) == {4}
    char_dir = str(Path(tiny["char"]).resolve())
    assert forward_passes == {_phone_dir(tiny): 4, char_dir: 4}  # once per utterance each
    assert decodes["n"] == 4  # the beam search too, for Double ASR and DArtP together
    forward_passes.clear()
    for name in NEURAL:
        tracks.forget()
        output = tmp_path / "read" / f"{name}.parquet"
        with counted_decodes() as decodes:
            scored = score_utterances(
                manifest,
                0,
                name,
                output,
                options=options(tiny, name),
                track_paths=[*files.values()],
            )
        assert not decodes, name
        assert scored.equals(without[name]) and (scored["status"] == "ok").all(), name
        alone = (tmp_path / "alone" / f"{name}.parquet").read_bytes()
        assert output.read_bytes() == alone, name
        assert not any(kind == "computed" for _, kind in tracks.counts()), name
    assert not forward_passes  # no measure ran a model: every output came from the files


def test_nad_computes_a_recording_that_is_test_and_reference_once(
    tiny, items, tmp_path, forward_passes
):
    a, b, c = (replace(items[k], reference_audios=()) for k in (1, 3, 4))
    ref = {item.utt_id: (item.audio_path, 0.0, -1.0) for item in (a, b, c)}
    scored = {a.utt_id: (ref["u3"], ref["u4"]), b.utt_id: (ref["u1"], ref["u4"])}

    def scores() -> list:
        nad = registry.create("nad", model=tiny["phone"])
        return [nad.evaluate(replace(t, reference_audios=scored[t.utt_id])) for t in (a, b)]

    fresh = scores()
    assert [s.status for s in fresh] == ["ok", "ok"]
    assert forward_passes == {"encoder": 3}  # three recordings, each test or reference or both

    track = model_tracks.hidden_track(_phone_dir(tiny), 10)
    audios = [load_shared(item.audio_path) for item in (a, b, c)]
    write_track(
        track_rows(track, ["a", "b", "c"], audios, SAMPLE_RATE), tmp_path / "t", track, "raw"
    )
    tracks.forget()
    forward_passes.clear()
    assert load_tracks([tmp_path / "t"], [track]) == 3
    assert scores() == fresh and not forward_passes  # all four NAD jobs read the same file


def _full_hidden_states(directory: Path, audio: np.ndarray) -> tuple:
    import torch
    from transformers import Wav2Vec2Model

    full = Wav2Vec2Model.from_pretrained(directory).eval()
    inputs = torch.from_numpy(audio.astype(np.float32)).unsqueeze(0)
    with torch.inference_mode():
        return full(inputs, output_hidden_states=True).hidden_states


def test_the_encoder_cut_after_its_layer_gives_the_full_models_hidden_layer(tiny, tmp_path):
    import torch
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    from pathbench_flow.testing.tiny_models import TINY

    torch.manual_seed(3)
    group = tmp_path / "group-norm"  # wav2vec2-base's layout: no final layer norm
    config = Wav2Vec2Config(feat_extract_norm="group", do_stable_layer_norm=False, **TINY)
    Wav2Vec2Model(config).eval().save_pretrained(group)
    audio = load_shared(BLUE["english32"])
    for directory in (Path(tiny["phone"]), group):
        full = _full_hidden_states(directory, audio)
        assert len(full) == 12
        for layer in (0, 3, 10, 11):
            cut = models.load_encoder(str(directory), layer)
            assert len(cut.model.encoder.layers) == layer
            features = cut.hidden(audio)
            expected = full[layer][0].double().numpy()
            assert np.abs(features - expected).max() == 0.0, (directory.name, layer)
    with pytest.raises(ValueError, match=r"layer 12 outside 0\.\.11"):
        models.load_encoder(str(group), 12)


def test_the_cpu_runs_one_utterance_at_a_time_and_batches_give_the_same_values(
    tiny, items, forward_passes, monkeypatch
):
    model = models.load_ctc(tiny["phone"])
    audios = [load_shared(item.audio_path) for item in items]
    calls = []
    run = models.CTCModel._run

    def recorded(self, batch):
        calls.append(len(batch))
        return run(self, batch)

    monkeypatch.setattr(models.CTCModel, "_run", recorded)
    one_by_one = model.log_posteriors(audios, batch_size=4)
    assert calls == [1] * len(audios)
    monkeypatch.setattr(models.CTCModel, "_batches", lambda self: True)  # as on a GPU
    calls.clear()
    batched = model.log_posteriors(audios, batch_size=4)
    assert calls == [4, 2]
    for single, padded in zip(one_by_one, batched, strict=True):
        assert single.shape == padded.shape
        np.testing.assert_allclose(padded, single, rtol=0, atol=1e-5)  # float32 rounding


def _jobs(plan: str) -> Counter:
    """Rule → number of its jobs in a dry run's plan."""
    return Counter(re.findall(r"^(?:local)?(?:rule|checkpoint) (\w+):", plan, flags=re.MULTILINE))


@pytest.mark.slow
def test_the_workflow_runs_the_phone_model_once_for_all_its_measures(tiny, tmp_path):
    from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "run")
    build_tone_dataset(workdir / "data" / "mine")
    config = {
        "datasets": {"mine": {"path": "data/mine", "trim_backend": "energy"}},
        "evaluators": ["artp", "artp_old"],
        "evaluator_options": {name: options(tiny, name) for name in PHONE_READERS},
        "variants": ["raw"],
        "reference_types": ["all"],
        "openset": {"enabled": False},
    }
    (workdir / "two.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "--cores", "2", "--configfile", "two.yaml")
    name = model_tracks.ctc_track(_phone_dir(tiny)).name
    track_logs = sorted((workdir / "logs/mine/compute_track").glob("*/raw/*.log"))
    assert [log.parent.parent.name for log in track_logs] == [name]
    assert f"tracks: {name} 0 reused, 4 computed" in track_logs[0].read_text()  # once each
    for measure in ("artp", "artp_old"):
        log = (workdir / f"logs/mine/score_utterances/{measure}/0000.log").read_text()
        assert f"tracks: {name} 4 reused, 0 computed" in log, log

    # dper, added to the same config, reads the same model: only its own scoring job is
    # added, no track job
    config["evaluators"].append("dper")
    (workdir / "two.yaml").write_text(yaml.safe_dump(config))
    plan = _jobs(snakemake(workdir, "-n", "--configfile", "two.yaml").stdout)
    assert plan["score_utterances"] == 1 and "compute_track" not in plan, plan
    snakemake(workdir, "--cores", "2", "--configfile", "two.yaml")
    log = (workdir / "logs/mine/score_utterances/dper/0000.log").read_text()
    assert f"tracks: {name} 4 reused, 0 computed" in log, log


def _resources(plan: str) -> dict[str, dict[str, str]]:
    """Output file → resources of every job a dry run lists."""
    found, output = {}, None
    for line in plan.splitlines():
        if line.strip().startswith("output: "):
            output = line.split("output: ", 1)[1].split(",")[0].strip()
        if line.strip().startswith("resources: ") and output is not None:
            pairs = line.split("resources: ", 1)[1].split(", ")
            found[output] = dict(pair.split("=", 1) for pair in pairs)
    return found


def test_a_model_track_job_is_planned_once_with_its_readers_resources(tiny, tmp_path):
    from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "wf")
    build_tone_dataset(workdir / "data" / "mine")
    config = {
        "datasets": {"mine": {"path": "data/mine", "trim_backend": "energy"}},
        "evaluators": ["artp_old", "dper", "nad", "cpps"],
        "evaluator_options": {
            "artp_old": {"model": tiny["phone"]},
            "dper": {"model": tiny["phone"]},
            "nad": {"model": tiny["phone"]},
        },
        "variants": ["raw"],
        "reference_types": ["all"],
        "openset": {"enabled": False},
        "device": "cuda",
    }
    (workdir / "c.yaml").write_text(yaml.safe_dump(config))
    plan = _resources(snakemake(workdir, "-n", "--configfile", "c.yaml").stdout)
    phone = model_tracks.ctc_track(_phone_dir(tiny)).name
    nad = model_tracks.hidden_track(_phone_dir(tiny), 10).name
    tracks_planned = {path: r for path, r in plan.items() if "/tracks/" in path}
    assert {path: (r["gpu"], r["mem_mb"]) for path, r in tracks_planned.items()} == {
        f"results/mine/tracks/{phone}/raw/0000.parquet": ("1", "4000"),
        f"results/mine/tracks/{nad}/raw/0000.parquet": ("1", "4000"),
        "results/mine/tracks/cpps/raw/0000.parquet": ("0", "2000"),
    }


def test_a_model_track_job_declares_memory_for_its_longest_utterance(tiny, tmp_path):
    """wav2vec2's memory grows with an utterance's length; once the shard checkpoint has
    written the slices, the job's declaration follows the longest utterance it reads."""
    from pathbench_flow.testing.kaldi_builder import tone
    from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "wf")
    data = build_tone_dataset(workdir / "data" / "mine")
    first = sorted((data / "wav").glob("*.wav"))[0]
    sf.write(first, tone(120.0, freq=150.0), 16000)  # 60 s past what the table covers
    config = {
        "datasets": {"mine": {"path": "data/mine", "trim_backend": "energy"}},
        "evaluators": ["artp_old", "cpps"],
        "evaluator_options": {"artp_old": {"model": tiny["phone"]}},
        "variants": ["raw"],
        "reference_types": ["control"],
        "openset": {"enabled": False},
    }
    (workdir / "c.yaml").write_text(yaml.safe_dump(config))
    phone = model_tracks.ctc_track(_phone_dir(tiny)).name
    model_file = f"results/mine/tracks/{phone}/raw/0000.parquet"
    before = _resources(snakemake(workdir, "-n", "--configfile", "c.yaml").stdout)
    assert before[model_file]["mem_mb"] == "4000"  # planned before any slice exists
    snakemake(workdir, "--cores", "1", "--configfile", "c.yaml", "--until", "shard_manifest")
    after = _resources(snakemake(workdir, "-n", "--configfile", "c.yaml").stdout)
    assert after[model_file]["mem_mb"] == "5500"  # 4,000 + 60 s x 25 MB
    assert after["results/mine/tracks/cpps/raw/0000.parquet"]["mem_mb"] == "2000"


def test_an_lm_track_job_declares_memory_for_the_lm_it_opens(tiny, tmp_path):
    """A PathBench LM is GBs: the n-gram transcription job declares from the size and kind of
    the file its decoder opens (here a sparse KenLM binary beside the ARPA path), so that
    Snakemake holds it back under ``--resources mem_mb`` instead of the kernel killing it."""
    from pathbench_flow.runtime.memory import BINARY, KENLM_BINARY_MAGIC, lm_memory_mb
    from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

    workdir = copy_workflow(tmp_path / "wf")
    build_tone_dataset(workdir / "data" / "mine")
    arpa = Path(shutil.copy(tiny["lm"], tmp_path / "wiki.arpa"))
    config = {
        "datasets": {"mine": {"path": "data/mine", "trim_backend": "energy"}},
        "evaluators": ["double_asr"],
        "evaluator_options": {"double_asr": options(tiny, "double_asr", lm={"en": str(arpa)})},
        "variants": ["raw"],
        "openset": {"enabled": False},
    }
    (workdir / "c.yaml").write_text(yaml.safe_dump(config))

    def lm_job_mb() -> int:
        plan = _resources(snakemake(workdir, "-n", "--configfile", "c.yaml").stdout)
        [declared] = [r["mem_mb"] for path, r in plan.items() if "/lm_transcript-" in path]
        return int(declared)

    assert lm_job_mb() == 4000  # a tiny ARPA: the model track's table entry
    size = 30 * 10**9
    with (tmp_path / "wiki.arpa.bin").open("wb") as binary:
        binary.write(KENLM_BINARY_MAGIC + b" format version 5\n")
        binary.truncate(size)  # sparse: no disk taken
    assert lm_job_mb() == 2000 + lm_memory_mb(BINARY, size)
