"""Does a reference dataset share recordings with its test dataset?

A shared recording with the same text would be scored against itself (P-ESTOI near 1.0, a
perfect match that says nothing about intelligibility), so the reference set's validation
compares its utterances with the test manifest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

from pathbench_flow.common.staging import is_present
from pathbench_flow.data.kaldi import Finding, Table, read_table
from pathbench_flow.data.references import Recording, shared_recordings

OVERLAP_EXAMPLES = 5
"""How many shared test/reference recordings a finding names before summarising the rest."""


class HashedRecording(Recording, Protocol):
    """A recording with the SHA-256 validation computed from its file's bytes (empty when
    audio was not checked): manifest rows and validated ``Utterance`` objects."""

    audio_sha256: str


def reference_overlap(
    test_path: Path,
    test: Iterable[HashedRecording],
    test_hashes: Mapping[str, str],
    reference_path: Path,
    reference: Iterable[HashedRecording],
    reference_hashes: Mapping[str, str],
) -> list[Finding]:
    """Findings naming both datasets when the reference dataset is, or shares recordings
    with, the test dataset.

    A reference dataset that is the test dataset is fatal. A shared recording with the same
    cleaned text would be its own reference: an error listing the shared utterances of the
    reference dataset (the one being validated), so ``on_error: drop`` removes them there and
    ``fail`` refuses. The same audio under different
    transcriptions is never matched as a reference but is a labelling defect: a warning.
    EasyCall's metadata has both (byte-identical files under several speakers and words).

    Byte-identical files are found by their SHA-256 (:func:`recording_digests`), from
    ``wav_hash.scp`` (``test_hashes``, ``reference_hashes``) or computed by validation; like
    one file, two copies are the same recording only where their time spans overlap.
    """
    fix = (
        "use a reference dataset of other recordings (e.g. the control speakers), "
        "or remove the shared recordings from one of the two"
    )
    if test_path.resolve() == reference_path.resolve():
        problem = (
            f"reference dataset {reference_path} is the test dataset {test_path}: "
            "every utterance would be scored against itself"
        )
        return [Finding(str(reference_path), 0, "", problem, fix)]
    test, reference = list(test), list(reference)
    pairs = shared_recordings(
        test,
        reference,
        recording_digests(test, test_hashes),
        recording_digests(reference, reference_hashes),
    )
    same_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean == r.text_clean]
    other_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean != r.text_clean]
    shared = (
        f"reference dataset {reference_path} shares {{}} recording(s) with test dataset "
        f"{test_path} (the same audio file and time, or byte-identical files: the same SHA-256)"
    )
    findings = []
    if same_text:
        findings.append(
            Finding(
                str(reference_path),
                0,
                _examples(same_text),
                shared.format(len(same_text))
                + " with the same text: they would be scored against themselves",
                fix,
                utterances=tuple(sorted({ref for _test, ref in same_text})),
            )
        )
    if other_text:
        findings.append(
            Finding(
                str(reference_path),
                0,
                _examples(other_text),
                shared.format(len(other_text)) + " under different transcriptions",
                "check which transcription the audio holds; fix or remove the duplicate",
                severity="warning",
            )
        )
    return findings


def shared_speakers(
    test_path: Path,
    test: Iterable[Recording],
    reference_path: Path,
    reference: Iterable[Recording],
    shared_speaker_ids: str,
) -> list[Finding]:
    """A warning naming the speaker ids found in both the test and the reference set, and
    what :func:`~pathbench_flow.data.references.select_references` does with them.

    Kaldi metadata means one id, one speaker, so by default (``same_speaker``) such a
    speaker's reference-set recordings are no references for their own test utterances
    (another take of the same sentence by the same voice scores as a near match); the
    warning counts the recordings that leaves out. With ``distinct`` the ids are taken to
    collide between two corpora, as the user's config says: no finding.
    """
    if shared_speaker_ids == "distinct":
        return []
    test_texts: dict[str, set[str]] = {}
    for row in test:
        test_texts.setdefault(row.speaker_id, set()).add(row.text_clean)
    excluded: dict[str, int] = {}
    for row in reference:
        if row.speaker_id in test_texts:
            same_text = row.text_clean in test_texts[row.speaker_id]
            excluded[row.speaker_id] = excluded.get(row.speaker_id, 0) + same_text
    if not excluded:
        return []
    speakers = sorted(excluded)
    shown = ", ".join(f"{spk} ({excluded[spk]})" for spk in speakers[:OVERLAP_EXAMPLES])
    rest = len(speakers) - OVERLAP_EXAMPLES
    shared = (
        f"{len(speakers)} speaker id(s) are in both test dataset {test_path} and reference "
        f"dataset {reference_path}"
    )
    problem = (
        f"{shared}: the same speaker, so their {sum(excluded.values())} reference "
        "recording(s) of a text they also say in the test set (in brackets, per speaker) are "
        "never references for their own utterances"
    )
    fix = (
        "if the ids only collide (different people), set validation.shared_speaker_ids: "
        "distinct, or rename the speakers of one set"
    )
    value = shown + (f" and {rest} more" if rest > 0 else "")
    return [Finding(str(reference_path), 0, value, problem, fix, severity="warning")]


def shared_utterance_ids(
    test_path: Path,
    test: Iterable[Recording],
    reference_path: Path,
    reference: Iterable[Recording],
) -> list[Finding]:
    """An error naming the utterance ids found in both the test and the reference set.

    Trim tables, tracks and scores key an utterance by its id across both sets (an ``fa``
    reference job reads the two sets' trim tables as one), so one id must name one recording.
    Listed as the reference set's utterances: ``on_error: drop`` removes them there. A
    reference set that is the test set is refused by :func:`reference_overlap` instead.
    """
    if test_path.resolve() == reference_path.resolve():
        return []
    test_ids = {row.utt_id for row in test}
    shared = sorted(row.utt_id for row in reference if row.utt_id in test_ids)
    if not shared:
        return []
    shown = ", ".join(shared[:OVERLAP_EXAMPLES])
    rest = len(shared) - OVERLAP_EXAMPLES
    problem = (
        f"{len(shared)} utterance id(s) are in both test dataset {test_path} and reference "
        f"dataset {reference_path}: an id names one recording across both sets"
    )
    fix = "rename the utterances of one set (e.g. prefix its ids) in every Kaldi file of that set"
    value = shown + (f" and {rest} more" if rest > 0 else "")
    return [Finding(str(reference_path), 0, value, problem, fix, utterances=tuple(shared))]


def _examples(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{test} = {ref}" for test, ref in pairs[:OVERLAP_EXAMPLES])
    rest = len(pairs) - OVERLAP_EXAMPLES
    return shown + (f" and {rest} more" if rest > 0 else "")


def read_hashes(directory: Path) -> dict[str, str]:
    """Recording id -> SHA-256 from ``wav_hash.scp``, empty when the file is absent.

    Used to compare recordings across datasets; malformed lines were already reported by the
    validation of ``directory`` itself and are skipped here.
    """
    file = Path(directory) / "wav_hash.scp"
    return digests(read_table(file, [], n_fields=1)) if is_present(file) else {}


def recording_digests(
    rows: Iterable[HashedRecording], declared: Mapping[str, str]
) -> dict[str, str]:
    """Recording id -> SHA-256 of its file: the digest validation computed from the bytes it
    read, else the one ``declared`` in wav_hash.scp (a validation without audio checks).

    Both are the SHA-256 of the file's bytes, so a dataset with ``wav_hash.scp`` and one
    without compare; the computed digest wins, as a stale ``wav_hash.scp`` would hide a copy.
    """
    return {**declared, **{row.recording_id: row.audio_sha256 for row in rows if row.audio_sha256}}


def digests(table: Table | None) -> dict[str, str]:
    """Recording id -> the (lower-case) SHA-256 a parsed ``wav_hash.scp`` lists."""
    return {key: e.fields[0].lower() for key, e in table.entries.items()} if table else {}
