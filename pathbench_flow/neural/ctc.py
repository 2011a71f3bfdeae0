"""CTC alignment, greedy decoding and PathBench's posterior scores (numpy only).

Everything here works on one utterance's frame-by-token matrix, whichever model produced it,
so it is tested exactly on hand-made matrices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pathbench_flow.common.transcripts import edit_distance


def forced_path(scores: np.ndarray, tokens: Sequence[int], blank: int) -> np.ndarray:
    """The token id of every frame on the most likely CTC path through ``tokens``.

    Viterbi over the CTC topology (blank, t1, blank, t2, ..., tN, blank) of ``scores``, frames x
    vocabulary log-posteriors: a frame stays in its state, moves to the next, or skips the
    blank between two different tokens; the path ends in the last token or the blank after
    it. It is the search of torchaudio's ``forced_align`` (PathBench's aligner), kept exact in
    the details that decide ties: the states searched at each frame are those from which the
    end can still be reached, a step or skip is taken only when it scores strictly higher
    than both other moves (so a tie between stepping and skipping stays), and the path ends
    in the final blank only when that scores strictly higher than the last token.

    Raises:
        ValueError: no tokens, or more frames needed (one per token plus one blank between
        each pair of equal neighbours) than there are.
    """
    if len(tokens) == 0:
        raise ValueError("no tokens to align")
    targets = np.asarray(tokens, dtype=np.int64)
    n_frames, n_tokens = scores.shape[0], len(targets)
    needed = n_tokens + int(np.count_nonzero(targets[1:] == targets[:-1]))
    if n_frames < needed:
        raise ValueError(f"{n_tokens} tokens do not fit in {n_frames} frames (need {needed})")
    labels = np.full(2 * n_tokens + 1, blank, dtype=np.int64)
    labels[1::2] = targets
    n_states = len(labels)
    can_skip = np.zeros(n_states, dtype=bool)
    can_skip[3::2] = labels[3::2] != labels[1:-2:2]
    impossible = np.array(-np.inf, dtype=scores.dtype)
    start, end = (0 if n_frames > needed else 1), 2
    total = np.full(n_states, impossible)
    total[start:end] = scores[0, labels[start:end]]
    back = np.zeros((n_frames, n_states), dtype=np.int8)
    for t in range(1, n_frames):
        if n_frames - t <= needed:
            if start % 2 == 1 and targets[start // 2] != targets[start // 2 + 1]:
                start += 1
            start += 1
        if t <= needed:
            if end % 2 == 0 and end < 2 * n_tokens and targets[end // 2 - 1] != targets[end // 2]:
                end += 1
            end += 1
        stay = total
        step = np.concatenate([[impossible], total[:-1]])
        skip = np.where(
            can_skip, np.concatenate([[impossible, impossible], total[:-2]]), impossible
        )
        take_skip = (skip > step) & (skip > stay)
        take_step = ~take_skip & (step > stay) & (step > skip)
        moves = np.where(take_skip, 2, np.where(take_step, 1, 0))
        best = np.where(take_skip, skip, np.where(take_step, step, stay))
        total = np.full(n_states, impossible)
        total[start:end] = best[start:end] + scores[t, labels[start:end]]
        back[t, start:end] = moves[start:end]
    state = n_states - 1 if total[-1] > total[-2] else n_states - 2
    path = np.empty(n_frames, dtype=np.int64)
    for t in range(n_frames - 1, -1, -1):
        path[t] = state
        state -= back[t, state]
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


def articulatory_precision(log_posteriors: np.ndarray, tokens: Sequence[int], blank: int) -> float:
    """PathBench's ArtP: mean posterior of the aligned token over the non-blank frames.

    The alignment is the most likely CTC path of ``tokens`` through the log-posteriors, as
    PathBench's ``torchaudio.functional.forced_align`` on ``log_softmax(logits)`` finds it
    (in float32, where ties arise that float64 would break otherwise); the score averages
    the posteriors (not the log-posteriors) on that path.
    """
    scores = np.asarray(log_posteriors, dtype=np.float32)  # torchaudio searches in float32
    path = forced_path(scores, tokens, blank)
    frames = np.flatnonzero(path != blank)
    return float(np.exp(scores[frames, path[frames]].astype(np.float64)).mean())


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
