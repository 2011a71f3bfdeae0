"""Model outputs as shared tracks: each model runs once per recording, whatever reads it.

PathBench's phone model feeds ArtP, Confidence, dPER and DArtP; each language's character ASR
model feeds PER, Double ASR and DArtP; wav2vec2 hidden states feed NAD, whose four jobs per
shard (raw and fa audio, control and all references) compare every recording, test or
reference, with the same features. Each of these outputs is a :class:`~pathbench_flow.tracks.Track`
whose function runs one model: :func:`ctc_track` for a CTC model's log-posteriors,
:func:`hidden_track` for one hidden layer. DArtP and Double ASR both read the n-gram beam
search of an ASR model's log-posteriors, the costliest step of either (pyctcdecode, about a
second per utterance); :func:`lm_track` is that transcription, computed once from the ASR
track's values (its ``sources``). The workflow writes their track files once per
(shard, variant) and every consumer reads them (:mod:`pathbench_flow.tracks`).

A model track's memo key must change whenever the model does, and must not depend on where the
model lies (a copy on another disk, a Hugging Face cache under another path give the same
values, and result files may not differ by a path). So its name and settings carry
:func:`model_identity`, a digest of what the model directory holds; the directory itself is
only the track's argument, where the job finds the model.

Nothing here imports torch: the workflow builds these tracks when it plans; the functions load
their model (once per process, :mod:`pathbench_flow.neural.models`) when first called.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from pathbench_flow import SAMPLE_RATE, tracks
from pathbench_flow.common.status import TOO_SHORT, NoScore
from pathbench_flow.neural import lm as ngram
from pathbench_flow.neural import models as loading
from pathbench_flow.neural.models import LM_RECORD_SUFFIX, PLANNED_FETCHES, RECORD_FILE

SMALL_FILE_BYTES = 1 << 20
"""Files up to this size (configs, vocabularies, tokenizer files) are identified by a hash of
their bytes; larger ones (weights) by their size and modification time, or by the content hash
the Hugging Face cache names their blob with."""
_BLOB_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A Hugging Face cache blob's name: the git SHA-1 or (LFS files, i.e. weights) SHA-256 of its
content."""


def _content_id(path: Path) -> str:
    """What ``path`` holds, cheaply: a weights file is ~1.3 GB, and every workflow parse and
    every consumer job identifies the models it names, so large files are never read."""
    target = path.resolve()
    if path.is_symlink() and _BLOB_NAME.fullmatch(target.name):
        return target.name
    stat = target.stat()
    if stat.st_size <= SMALL_FILE_BYTES:
        return hashlib.sha256(target.read_bytes()).hexdigest()
    return f"{stat.st_size} bytes, modified {stat.st_mtime_ns} ns"


def model_identity(directory: str | Path) -> str:
    """SHA-256 of the names and contents of the files in a model directory, never its path.

    Small files count by their bytes (``config.json``, the feature extractor's settings, the
    vocabulary); a weights file by its Hugging Face blob hash, or else its size and mtime: any
    rewrite of a model (``save_pretrained``, a new download, a copy without ``-p``) changes the
    identity, so a changed model is never served an old track value, while the same files
    anywhere give the same identity. Hidden files and subdirectories are ignored, as
    ``from_pretrained`` ignores them.
    """
    planned = PLANNED_FETCHES.get(str(Path(directory).resolve()))
    record = Path(directory) / RECORD_FILE
    if record.is_file() or planned:
        # A fetched checkpoint is known by its pinned id, commit and weights digest, before
        # its files exist (the plan) and after (its record): the fetch verified the files.
        return str(json.loads(record.read_text())["identity"]) if record.is_file() else planned
    digest = hashlib.sha256()
    for path in sorted(Path(directory).iterdir()):
        if path.name.startswith(".") or not path.is_file():
            continue
        digest.update(f"{path.name}\0{_content_id(path)}\n".encode())
    return digest.hexdigest()


@cache
def ctc_track(model_dir: str) -> tracks.Track:
    """The log-posteriors (frames, vocabulary) of the CTC model in ``model_dir`` as a track.

    Cached per process, like the model (:func:`~pathbench_flow.neural.models.load_ctc`): a job
    identifies each model once, however many utterances it reads.
    """
    identity = model_identity(model_dir)
    return tracks.Track(
        f"ctc_log_posteriors-{identity[:16]}",
        ("values", "shape"),
        "wav2vec2 CTC log-posteriors (frames, vocabulary; CTCModel.log_posteriors) of the "
        f"model with identity {identity}",
        "pathbench_flow.neural.model_tracks:ctc_log_posteriors",
        (("model_dir", model_dir),),
        batched=True,
    )


@cache
def hidden_track(model_dir: str, layer: int) -> tracks.Track:
    """Hidden layer ``layer`` (frames, dimensions) of the wav2vec2 model in ``model_dir``, the
    features NAD compares, as a track (cached per process, as :func:`ctc_track`)."""
    identity = model_identity(model_dir)
    return tracks.Track(
        f"wav2vec2_layer{layer}-{identity[:16]}",
        ("values", "shape"),
        f"wav2vec2 hidden_states[{layer}] of raw float32 audio, as float64 (frames, "
        f"dimensions), of the model with identity {identity}",
        "pathbench_flow.neural.model_tracks:hidden_states",
        (("model_dir", model_dir), ("layer", int(layer))),
    )


def lm_identity(path: str | Path) -> str:
    """What an n-gram file holds, never where it lies: a fetched LM (config ``fetch``) by the
    identity the fetch plan gives it before the file exists and its record after (PathBench's
    named path in the archive the lock pins, which determines the member opened,
    :func:`pathbench_flow.fetching.lms.lm_identity`); any other by its bytes (up to
    :data:`SMALL_FILE_BYTES`) or its size and mtime (a Wikipedia LM is gigabytes, and every
    parse identifies it) of the file the decoder opens
    (:func:`~pathbench_flow.neural.lm.opened_lm_file`: the binary beside an ARPA path)."""
    target = Path(path).expanduser()
    record = target.with_name(target.name + LM_RECORD_SUFFIX)
    if record.is_file():
        fetched = json.loads(record.read_text()).get("identity")
    else:
        fetched = PLANNED_FETCHES.get(str(target.resolve()))
    return fetched or _content_id(ngram.opened_lm_file(target))


@cache
def lm_track(model_dir: str, lm_path: str) -> tracks.Track:
    """The n-gram beam-search transcription of the CTC model in ``model_dir`` with the LM
    ``lm_path`` (:class:`~pathbench_flow.neural.lm.LMDecoder`), as Unicode code points
    (:func:`text_arrays`), computed from :func:`ctc_track` of the same model (cached per
    process, as :func:`ctc_track`)."""
    model, lm = model_identity(model_dir), lm_identity(lm_path)
    key = hashlib.sha256(f"{model}\0{lm}".encode()).hexdigest()
    return tracks.Track(
        f"lm_transcript-{key[:16]}",
        ("codepoints",),
        "pyctcdecode beam search with its defaults (LMDecoder) over the log-posteriors of the "
        f"CTC model with identity {model}, n-gram model {lm}, as Unicode code points",
        "pathbench_flow.neural.model_tracks:lm_transcripts",
        (("model_dir", model_dir), ("lm", lm_path)),
        batched=True,
        sources=(ctc_track(model_dir).name,),
    )


def text_arrays(text: str) -> tracks.Arrays:
    """A text as a track value: its code points, exact in float64."""
    return (np.array([ord(char) for char in text], dtype=np.float64),)


def arrays_text(arrays: tracks.Arrays) -> str:
    """The text of a :func:`text_arrays` value."""
    return "".join(map(chr, arrays[0].astype(np.int64).tolist()))


def _require_rate(fs: int) -> None:
    if fs != SAMPLE_RATE:
        raise ValueError(f"wav2vec2 expects {SAMPLE_RATE} Hz audio, got {fs} Hz")


def ctc_log_posteriors(
    audios: Sequence[np.ndarray], fs: int, *, model_dir: str, batch_size: int
) -> list[tracks.Arrays | NoScore]:
    """The :func:`ctc_track` analysis: each audio's log-posteriors as a matrix value, or
    ``too_short`` under :data:`~pathbench_flow.neural.models.MIN_SAMPLES` samples."""
    _require_rate(fs)
    outcomes: list[tracks.Arrays | NoScore] = [
        NoScore(TOO_SHORT, f"{len(audio)} samples; at least {loading.MIN_SAMPLES}")
        for audio in audios
    ]
    long = [i for i, audio in enumerate(audios) if len(audio) >= loading.MIN_SAMPLES]
    if long:
        found = loading.load_ctc(model_dir).log_posteriors([audios[i] for i in long], batch_size)
        for i, log_posteriors in zip(long, found, strict=True):
            outcomes[i] = tracks.as_arrays(log_posteriors)
    return outcomes


def hidden_states(audio: np.ndarray, fs: int, *, model_dir: str, layer: int) -> tracks.Arrays:
    """The :func:`hidden_track` analysis: hidden layer ``layer`` as a matrix value."""
    _require_rate(fs)
    return tracks.as_arrays(loading.load_encoder(model_dir, layer).hidden(audio))


def lm_transcripts(
    audios: Sequence[np.ndarray], fs: int, *, model_dir: str, lm: str, batch_size: int
) -> list[tracks.Outcome]:
    """The :func:`lm_track` analysis: each audio's ASR log-posteriors (from the memo, which
    the job filled from the ASR track's file, else run now) decoded with the n-gram model.
    An audio the ASR track has no value for keeps that outcome, a failed decode its error."""
    _require_rate(fs)
    found = tracks.outcomes(ctc_track(model_dir), audios, fs, batch_size)
    decoder = ngram.load_decoder(tuple(loading.load_ctc(model_dir).labels), lm)
    texts: list[tracks.Outcome] = []
    for outcome in found:
        try:
            log_posteriors = tracks.as_matrix(tracks.arrays(outcome))
            texts.append(text_arrays(decoder.decode(log_posteriors)))
        except Exception as error:  # noqa: BLE001 - the outcome of this audio
            texts.append(error)
    return texts
