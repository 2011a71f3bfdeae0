"""Peak memory of an n-gram LM decoder against the LM file's size, for ARPA and KenLM binary.

PathBench's LMs are multi-GB (its English one a 14.6 GB KenLM binary), so what an
``lm_transcript`` track job needs is the LM's, not the CTC model's. The benchmark generates
word 3-gram ARPA files of a few target sizes (:func:`write_arpa`: a Zipf-distributed vocabulary
of pseudo-words, every n-gram's context present, backoffs on all but the highest order, floats
written as lmplz writes them), converts each with KenLM's ``build_binary`` (the pip package does
not ship it: build it from the kenlm sdist with its ``compile_query_only.sh``), then measures
each file in a fresh process that does what an ``lm_transcript`` job does: pyctcdecode's
``build_ctcdecoder`` with ``kenlm_model_path`` (``kenlm.Model``, and for an ARPA file its
unigram list and the trie built from it), then one decode of a 10 s utterance's synthetic
log-posteriors.

What is counted: the child's peak resident set (VmHWM of /proc/self/status, read after the
decode; not ``ru_maxrss`` from ``wait4``, which counts the forking parent's pages from before
the child's ``exec``), which includes file-backed pages. A KenLM binary is mmapped with
``MAP_POPULATE`` (its default load method, ``POPULATE_OR_READ``), so the whole file is
resident as page-cache pages mapped into the process: SLURM's RSS accounting and a cgroup's
memory limit both count them, and evicting them under a limit turns every LM query into a disk
read. The child also reports its anonymous and file-backed RSS after the decode, to show the
split.

Run: ``python benchmarks/lm_memory.py --build-binary PATH/TO/build_binary`` (sizes 0.25, 0.5,
1, 2 GB; ``--sizes`` to choose, ``--workdir`` for the files, several GB). Prints a Markdown
table and the least-squares fit per kind, which benchmarks/README.md ("n-gram LM memory")
holds and :func:`pathbench_flow.runtime.memory.lm_memory_mb` declares from.
"""

from __future__ import annotations

import argparse
import json
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

VOCABULARY = 300_000
"""Word types of the generated LMs (Wikipedia LMs pruned to a vocabulary are of this order)."""
ZIPF_EXPONENT = 1.0
BIGRAM_SHARE = 0.4
"""Fraction of the file's bytes in bigrams; the trigrams take the rest."""
CHUNK = 1_000_000
LABELS = ["", " ", "'", *string.ascii_lowercase]
"""A CTC vocabulary as pyctcdecode takes it: the blank first, then a word separator."""
FRAMES_PER_SECOND = 50
"""wav2vec2's output rate."""
UTTERANCE_S = 10.0


def pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct lower-case pseudo-words, 2 to 14 letters (shorter ones commoner)."""
    words: dict[str, None] = {}
    letters = np.array(list(string.ascii_lowercase))
    while len(words) < count:
        lengths = np.clip(rng.poisson(6.0, count), 2, 14)
        for length in lengths:
            words["".join(rng.choice(letters, length))] = None
    return list(words)[:count]


def zipf_sampler(size: int, rng: np.random.Generator):
    """A function drawing ``n`` ranks in ``[0, size)`` with probability ~ 1/(rank+1)^s."""
    cumulative = np.cumsum(1.0 / np.arange(1, size + 1) ** ZIPF_EXPONENT)
    cumulative /= cumulative[-1]

    def draw(n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cumulative, rng.random(n)), size - 1)

    return draw


def distinct(count: int, draw_keys) -> np.ndarray:
    """``count`` distinct int64 keys from repeated batches of ``draw_keys(n)``."""
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < count:
        keys = np.unique(np.concatenate([keys, draw_keys(count)]))
    return np.random.default_rng(len(keys)).permutation(keys)[:count]


def float_strings(low: float, high: float, rng: np.random.Generator) -> list[str]:
    """A table of log10 values as lmplz writes them (7 decimals); indexed, not formatted per
    line, to write the GBs quickly."""
    return [f"{value:.7f}" for value in rng.uniform(low, high, 4096)]


def write_arpa(path: Path, target_bytes: int, vocabulary: int = VOCABULARY) -> None:
    """A word 3-gram ARPA file of about ``target_bytes``: ``vocabulary`` unigrams (with
    ``<s>``, ``</s>``, ``<unk>``), Zipf-drawn bigrams, and trigrams joining two bigrams that
    share a word, so that both the context and the suffix of every n-gram are in the model, as
    KenLM's probing tables expect of an unpruned model."""
    rng = np.random.default_rng(0)
    words = ["<unk>", "<s>", "</s>", *pseudo_words(vocabulary - 3, rng)]
    zipf = zipf_sampler(len(words) - 3, rng)

    def draw(n: int) -> np.ndarray:
        return zipf(n) + 3  # ordinary words, the special tokens left out

    mean_word = float(np.mean([len(w) for w in words[:: max(1, len(words) // 10_000)]]))
    mean_drawn = float(np.mean([len(words[i]) for i in draw(100_000)]))
    bigram_line = 10 + 1 + 2 * mean_drawn + 1 + 1 + 10 + 1
    trigram_line = 10 + 1 + 3 * mean_drawn + 2 + 1
    unigram_bytes = len(words) * (10 + mean_word + 13)
    n_bigrams = int(BIGRAM_SHARE * (target_bytes - unigram_bytes) / bigram_line)
    n_trigrams = int((1 - BIGRAM_SHARE) * (target_bytes - unigram_bytes) / trigram_line)
    vocab = np.int64(len(words))
    bigrams = np.sort(distinct(n_bigrams, lambda n: draw(n) * vocab + draw(n)))
    firsts = bigrams // vocab

    def joined(n: int) -> np.ndarray:
        """Keys ``left * vocab + right`` of bigram pairs (a, b), (b, c) (indices into
        ``bigrams``), for ``n`` random left bigrams whose second word starts a bigram."""
        left = rng.integers(0, n_bigrams, n, dtype=np.int64)
        begin = np.searchsorted(firsts, bigrams[left] % vocab)
        end = np.searchsorted(firsts, bigrams[left] % vocab, side="right")
        has = end > begin
        right = begin[has] + (rng.random(has.sum()) * (end - begin)[has]).astype(np.int64)
        return left[has] * np.int64(n_bigrams) + right

    trigrams = distinct(n_trigrams, joined)
    probabilities, backoffs = float_strings(-6, -0.1, rng), float_strings(-1, 0, rng)
    with path.open("w") as arpa:
        arpa.write(f"\\data\\\nngram 1={len(words)}\nngram 2={n_bigrams}\nngram 3={n_trigrams}\n")
        arpa.write("\n\\1-grams:\n")
        ranks = np.arange(1, len(words) + 1, dtype=np.float64)
        for index, word in enumerate(words):
            unigram = "-99" if word == "<s>" else f"{np.log10(0.1 / ranks[index]):.7f}"
            arpa.write(f"{unigram}\t{word}\t{backoffs[index % 4096]}\n")
        arpa.write("\n\\2-grams:\n")
        for start in range(0, n_bigrams, CHUNK):
            keys = bigrams[start : start + CHUNK]
            first, second = (keys // vocab).tolist(), (keys % vocab).tolist()
            picks = rng.integers(0, 4096, (len(keys), 2)).tolist()
            arpa.write(
                "".join(
                    f"{probabilities[p]}\t{words[a]} {words[b]}\t{backoffs[q]}\n"
                    for a, b, (p, q) in zip(first, second, picks, strict=True)
                )
            )
        arpa.write("\n\\3-grams:\n")
        for start in range(0, n_trigrams, CHUNK):
            keys = trigrams[start : start + CHUNK]
            left, right = bigrams[keys // n_bigrams], bigrams[keys % n_bigrams]
            first, second = (left // vocab).tolist(), (left % vocab).tolist()
            third = (right % vocab).tolist()
            picks = rng.integers(0, 4096, len(keys)).tolist()
            arpa.write(
                "".join(
                    f"{probabilities[p]}\t{words[a]} {words[b]} {words[c]}\n"
                    for a, b, c, p in zip(first, second, third, picks, strict=True)
                )
            )
        arpa.write("\n\\end\\\n")


def log_posteriors(words: list[str], rng: np.random.Generator) -> np.ndarray:
    """:data:`UTTERANCE_S` of CTC log-posteriors over :data:`LABELS` spelling ``words``: each
    letter peaked for two frames, then a blank frame, with noise on every label."""
    frames = int(UTTERANCE_S * FRAMES_PER_SECOND)
    path: list[int] = []
    for word in words:
        for letter in word:
            path += [LABELS.index(letter)] * 2 + [0]
        path += [1]
    path = (path * (frames // max(1, len(path)) + 1))[:frames]
    logits = rng.normal(0.0, 1.0, (frames, len(LABELS)))
    logits[np.arange(frames), path] += 8.0
    logits -= logits.max(axis=1, keepdims=True)
    return (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)


def status_mb(*fields: str) -> dict[str, float]:
    """Fields of /proc/self/status, in MB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in fields:
            found[name] = int(value.split()[0]) / 1024
    return found


def child(path: str | None, words: list[str]) -> None:
    """In a fresh process: build the decoder as an ``lm_transcript`` job does, decode one
    utterance, print the times and the resident memory after each step as JSON."""
    import pyctcdecode

    start = time.perf_counter()
    decoder = pyctcdecode.build_ctcdecoder(LABELS, kenlm_model_path=path)
    loaded = time.perf_counter()
    after_load = status_mb("VmHWM", "RssAnon", "RssFile")
    text = decoder.decode(log_posteriors(words, np.random.default_rng(1)))
    decoded = time.perf_counter()
    print(
        json.dumps(
            {
                "load_s": loaded - start,
                "decode_s": decoded - loaded,
                "after_load": after_load,
                "after_decode": status_mb("VmHWM", "RssAnon", "RssFile"),
                "words_decoded": len(text.split()),
            }
        )
    )


def measure(path: Path | None, words: list[str]) -> dict:
    """:func:`child` in its own process; its peak RSS (MB) as ``peak_mb``."""
    arguments = [sys.executable, __file__, "--child", str(path or ""), "--words", *words]
    found = subprocess.run(arguments, capture_output=True, text=True, check=True)
    result = json.loads(found.stdout)
    return {**result, "peak_mb": result["after_decode"]["VmHWM"]}


def fit(sizes_gb: list[float], peaks_mb: list[float]) -> tuple[float, float]:
    """Least-squares MB per GB of file and intercept (MB)."""
    slope, intercept = np.polyfit(sizes_gb, peaks_mb, 1)
    return float(slope), float(intercept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--vocabulary", type=int, default=VOCABULARY, help="word types")
    parser.add_argument("--build-binary", help="KenLM's build_binary (else no binary rows)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "lm_memory")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--words", nargs="*", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child is not None:
        child(options.child or None, options.words)
        return
    options.workdir.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[tuple[float, dict]]] = {"arpa": [], "binary": []}
    baseline = measure(None, ["no", "model"])
    print(f"no LM: peak {baseline['peak_mb']:.0f} MB", file=sys.stderr)
    for size in options.sizes:
        tag = "" if options.vocabulary == VOCABULARY else f"_{options.vocabulary}w"
        arpa = options.workdir / f"lm_{size:g}gb{tag}.arpa"
        if not arpa.is_file():
            write_arpa(arpa, int(size * 1e9), options.vocabulary)
        words = [line.split("\t")[1] for line in _unigram_lines(arpa, 12)]
        files = {"arpa": arpa}
        if options.build_binary:
            binary = arpa.with_name(arpa.name + ".bin")
            if not binary.is_file():
                subprocess.run(
                    [options.build_binary, str(arpa), str(binary)],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            files["binary"] = binary
        for kind, path in files.items():
            result = measure(path, words)
            rows[kind].append((path.stat().st_size / 1e9, result))
            print(f"{kind} {path.name}: {json.dumps(result)}", file=sys.stderr)
    print(f"no LM (pyctcdecode, one decode): peak RSS {baseline['peak_mb']:.0f} MB\n")
    print(
        "| kind | file (GB) | load (s) | peak RSS (MB) | anon / file-backed after decode (MB) "
        "| MB per GB of file |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for kind, found in rows.items():
        for size_gb, result in found:
            after = result["after_decode"]
            print(
                f"| {kind} | {size_gb:.3f} | {result['load_s']:.0f} | {result['peak_mb']:.0f} "
                f"| {after['RssAnon']:.0f} / {after['RssFile']:.0f} "
                f"| {result['peak_mb'] / size_gb:.0f} |"
            )
    for kind, found in rows.items():
        if len(found) > 1:
            slope, intercept = fit([s for s, _ in found], [r["peak_mb"] for _, r in found])
            print(f"\n{kind}: peak RSS = {slope:.0f} MB per GB of file + {intercept:.0f} MB")


def _unigram_lines(arpa: Path, count: int) -> list[str]:
    """The first ``count`` unigram lines of ``arpa`` past its special tokens: the words the
    decoded utterance spells."""
    lines = []
    with arpa.open() as handle:
        for line in handle:
            if line.startswith("\\1-grams:"):
                break
        for line in handle:
            if len(lines) >= count:
                break
            if not line.split("\t")[1].startswith("<"):
                lines.append(line)
    return lines


if __name__ == "__main__":
    main()
