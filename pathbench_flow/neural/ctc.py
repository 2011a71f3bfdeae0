"""CTC alignment, greedy decoding and PathBench's posterior scores (numpy only).

Everything here works on one utterance's frame-by-token matrix, whichever model produced it,
so it is tested exactly on hand-made matrices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pathbench_flow.measures.recognition import edit_distance


def forced_path(scores: np.ndarray, tokens: Sequence[int], blank: int) -> np.ndarray:
    """The token id of every frame on the best CTC path through ``tokens``.

    Viterbi over the CTC topology (blank, t1, blank, t2, ..., tN, blank): a frame stays in its
    state, moves to the next, or skips the blank between two different tokens; the path ends
    in the last token or the blank after it. The path maximises the *sum* of ``scores``
    (frames x vocabulary): log-posteriors give the usual most likely alignment; PathBench's
    ArtP passes posteriors (see :func:`articulatory_precision`).

    Raises:
        ValueError: no tokens, or more frames needed than there are.
    """
    if len(tokens) == 0:
        raise ValueError("no tokens to align")
    n_frames = scores.shape[0]
    labels = np.full(2 * len(tokens) + 1, blank)
    labels[1::2] = tokens
    n_states = len(labels)
    skip = np.zeros(n_states, dtype=bool)
    skip[3::2] = labels[3::2] != labels[1:-2:2]
    total = np.full(n_states, -np.inf)
    total[:2] = scores[0, labels[:2]]
    back = np.zeros((n_frames, n_states), dtype=np.int64)
    states = np.arange(n_states)
    for t in range(1, n_frames):
        step = np.concatenate([[-np.inf], total[:-1]])
        jump = np.where(skip, np.concatenate([[-np.inf, -np.inf], total[:-2]]), -np.inf)
        options = np.stack([total, step, jump])
        best = np.argmax(options, axis=0)
        total = options[best, states] + scores[t, labels]
        back[t] = states - best
    last = n_states - 1 if total[-1] >= total[-2] else n_states - 2
    if not np.isfinite(total[last]):
        raise ValueError(f"{len(tokens)} tokens do not fit in {n_frames} frames")
    path = np.empty(n_frames, dtype=np.int64)
    path[-1] = last
    for t in range(n_frames - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return labels[path]


def greedy_runs(posteriors: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs of the frame-wise best token as (token, first frame, end frame exclusive)."""
    best = np.argmax(posteriors, axis=1)
    edges = np.flatnonzero(np.diff(best)) + 1
    starts = np.concatenate([[0], edges])
    ends = np.concatenate([edges, [len(best)]])
    return [(int(best[s]), int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


def greedy_tokens(posteriors: np.ndarray, blank: int) -> list[int]:
    """Best-path CTC decoding: repeated tokens merged, blanks removed."""
    return [token for token, _s, _e in greedy_runs(posteriors) if token != blank]


def articulatory_precision(posteriors: np.ndarray, tokens: Sequence[int], blank: int) -> float:
    """PathBench's ArtP: mean posterior of the aligned token over the non-blank frames.

    PathBench hands posteriors, not log-posteriors, to its forced aligner, so the path is the
    one with the largest sum of posteriors; that is reproduced here because it sets the
    values (its published 0.0695 for the accented "blue" test recording).
    """
    path = forced_path(posteriors, tokens, blank)
    frames = np.flatnonzero(path != blank)
    return float(posteriors[frames, path[frames]].mean())


def confidence(posteriors: np.ndarray, blank: int) -> float:
    """PathBench's phonetic confidence (``artp_old``): the mean, over the non-blank runs of
    the greedy path, of each run's mean posterior of its token; 0.0 when every frame is blank
    (PathBench's value for an utterance in which the model hears no phone)."""
    means = [
        posteriors[start:end, token].mean()
        for token, start, end in greedy_runs(posteriors)
        if token != blank
    ]
    return float(np.mean(means)) if means else 0.0


def error_rate(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """Edit distance over reference length (jiwer's WER over phone tokens, as PathBench)."""
    if not reference:
        raise ValueError("empty reference")
    return edit_distance(reference, hypothesis) / len(reference)
