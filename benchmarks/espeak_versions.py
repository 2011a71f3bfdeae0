"""Which espeak-ng library gives PathBench's phonemes: the bundled 1.52.0 or Debian's 1.51?

PathBench phonemises with espeak-ng built from commit 2ea41210 (after 1.52.0). This script
phonemises the distinct texts of the real corpora's full metadata (COPAS, EasyCall, NeuroVoz,
TORGO, UASpeech: the ``datasets/`` folder of github.com/karkirowle/pathbench; the repository
carries only a cut of it, ``tests/fixtures/kaldi-metadata``) with
:func:`pathbench_flow.neural.phonemes.phonemise` once per library, each in its own process
(phonemizer loads one library per process), and counts, per corpus language, the texts whose
phones equal those of the reference library.

Run: ``python benchmarks/espeak_versions.py --metadata <pathbench>/datasets
--reference resources/fetched/espeak-ng/lib/libespeak-ng.so
[--debian /usr/lib/x86_64-linux-gnu/libespeak-ng.so.1]``; the bundled library is the one used
when ``PHONEMIZER_ESPEAK_LIBRARY`` is unset. The pinned build is the workflow's: with
``fetch.enabled: true`` in a config, ``snakemake resources/fetched/espeak-ng --cores 1
--configfile <config>`` runs the rule ``build_espeak`` alone (``pathbench_flow.stages.espeak``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

DEBIAN = "/usr/lib/x86_64-linux-gnu/libespeak-ng.so.1"


def corpus_texts(metadata: Path) -> dict[str, list[str]]:
    """Distinct transcriptions per dataset language of the tree ``metadata``, in first-seen
    order."""
    from pathbench_flow.common.languages import canonical_language

    texts: dict[str, dict[str, None]] = defaultdict(dict)
    for text_file in sorted(metadata.glob("*/*/*/*/text")):
        language = canonical_language((text_file.parent / "language").read_text().strip())
        for line in text_file.read_text(encoding="utf-8").splitlines():
            _utt, _, transcription = line.partition(" ")
            if transcription.strip():
                texts[language][transcription.strip()] = None
    return {language: list(found) for language, found in texts.items()}


def phonemise_all(texts: dict[str, list[str]]) -> dict[str, object]:
    """This process's library version and the phones of every text (the child's job)."""
    from pathbench_flow.neural import phonemes

    return {
        "version": phonemes.espeak_version(),
        "phones": {
            language: [" ".join(phonemes.phonemise(text, language)) for text in found]
            for language, found in texts.items()
        },
    }


def run_with(library: str | None, texts: dict[str, list[str]]) -> dict[str, object]:
    """Phonemise in a child process with ``library`` (None: the bundled one)."""
    env = {k: v for k, v in os.environ.items() if k != "PHONEMIZER_ESPEAK_LIBRARY"}
    if library:
        env["PHONEMIZER_ESPEAK_LIBRARY"] = library
    done = subprocess.run(
        [sys.executable, __file__, "--child"],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--metadata",
        type=Path,
        help="PathBench's full Kaldi metadata: the datasets/ folder of a clone of "
        "github.com/karkirowle/pathbench",
    )
    parser.add_argument("--reference", help="libespeak-ng.so of PathBench's pinned build")
    parser.add_argument("--debian", default=DEBIAN, help="the system's libespeak-ng")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(phonemise_all(json.loads(sys.stdin.read()))))
        return
    cut = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kaldi-metadata"
    metadata = args.metadata.resolve() if args.metadata else None
    if metadata is None or metadata == cut or not (metadata / "uaspeech").is_dir():
        parser.error(
            f"--metadata {args.metadata}: give PathBench's full Kaldi metadata, the datasets/ "
            "folder of a clone of github.com/karkirowle/pathbench (tests/fixtures/kaldi-metadata "
            "is a cut of it, too small for this count)"
        )
    texts = corpus_texts(metadata)
    reference = run_with(args.reference, texts)
    candidates = {"bundled (espeakng-loader)": run_with(None, texts)}
    candidates["system"] = run_with(args.debian, texts)
    print(f"reference: espeak-ng {reference['version']}")
    print("| library | version | " + " | ".join(sorted(texts)) + " | all |")
    print("|---|---|" + "---:|" * (len(texts) + 1))
    for name, result in candidates.items():
        cells, same_all = [], 0
        for language in sorted(texts):
            mine, theirs = result["phones"][language], reference["phones"][language]
            same = sum(a == b for a, b in zip(mine, theirs, strict=True))
            same_all += same
            cells.append(f"{same}/{len(theirs)}")
        total = sum(len(found) for found in texts.values())
        print(f"| {name} | {result['version']} | " + " | ".join(cells) + f" | {same_all}/{total} |")


if __name__ == "__main__":
    main()
