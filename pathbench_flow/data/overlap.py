"""Does a reference dataset share recordings with its test dataset?

A shared recording with the same text would be scored against itself (P-ESTOI 0.995 in issue
12), so the reference set's validation compares its utterances with the test manifest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pathbench_flow.data.kaldi import Finding, Table, read_table
from pathbench_flow.data.references import Recording, shared_recordings

OVERLAP_EXAMPLES = 5
"""How many shared test/reference recordings a finding names before summarising the rest."""


def reference_overlap(
    test_path: Path,
    test: Iterable[Recording],
    test_hashes: Mapping[str, str],
    reference_path: Path,
    reference: Iterable[Recording],
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
    pairs = shared_recordings(test, reference, test_hashes, reference_hashes)
    same_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean == r.text_clean]
    other_text = [(t.utt_id, r.utt_id) for t, r in pairs if t.text_clean != r.text_clean]
    shared = (
        f"reference dataset {reference_path} shares {{}} recording(s) with test dataset "
        f"{test_path} (same audio file and time, or same wav_hash.scp digest)"
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
    return digests(read_table(file, [], n_fields=1)) if file.is_file() else {}


def digests(table: Table | None) -> dict[str, str]:
    return {key: e.fields[0].lower() for key, e in table.entries.items()} if table else {}
