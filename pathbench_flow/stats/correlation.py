"""Speaker-level correlation of intelligibility measures with perceptual ground truth.

PathBench ranks measures by the Pearson correlation of their per-speaker values with the
speakers' intelligibility scores (``spk2score``). Two of its rules matter for comparability
and are reproduced here:

* **One speaker set for all metrics.** A metric that fails for some speakers would otherwise
  be scored on an easier or harder subset than the others, so every metric is correlated on
  the *common speaker set*: the speakers with a ground-truth score and a value for every
  *constraining* metric. Allowlisted metrics (every variant and reference set of the evaluators
  ``wada_snr`` and ``spk2age`` by default, which fail or are unknown for some speakers by
  nature) use their own intersection with the ground truth, so they cannot shrink the set for
  everybody else. A metric that cannot be correlated
  itself (values for fewer than ``MIN_SPEAKERS`` rated speakers, or one constant value) does
  not constrain either: it carries no information, so it must not cost the others speakers.
  Every speaker that leaves a metric's set is listed with the metrics that removed it
  (:class:`SpeakerSets`), in the correlation table and in ``aggregation.json``.
* **Sign alignment.** Some measures fall as intelligibility rises (error rates, distances);
  ``aligned_r`` multiplies r by the metric's direction so that a positive value always means
  "agrees with the listeners", which is what the results table compares.

On top of PathBench's point estimate this module adds p-values, Spearman's rho and a
percentile bootstrap confidence interval of r, because with 10–20 speakers per dataset the
sampling error of r is large and a ranking without it is misleading.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pathbench_flow.data.kaldi import Finding, parse_score, read_table
from pathbench_flow.io import write_parquet
from pathbench_flow.schemas import CORRELATION_SCHEMA, CORRELATION_STATISTICS
from pathbench_flow.seeds import BOOTSTRAP_SEED

CATEGORIES: tuple[str, ...] = (
    "reference-free signal",
    "reference-free speaker",
    "reference-text",
    "reference-audio",
    "lookup",
)
"""Metric categories in the order the results table lists them.

The first four are PathBench's taxonomy of measures. ``lookup`` (the registry's category for
pre-computed values such as ``spk2age``) holds baselines rather than measures, so it comes last.
"""

DEFAULT_ALLOWLIST: tuple[str, ...] = ("wada_snr", "spk2age")
"""Evaluators whose metrics are allowed partial speaker coverage (PathBench's allowlist)."""

MIN_SPEAKERS = 3
"""Fewest speakers a correlation is reported for: with two points |r| is always 1."""

N_BOOT = 2000
"""Bootstrap resamples: enough for stable 2.5/97.5 percentiles at a fraction of a second."""
CI_LEVEL = 0.95

CORRELATION_COLUMNS: tuple[str, ...] = tuple(CORRELATION_SCHEMA.names)


@dataclass(frozen=True)
class Correlation:
    """How well one speaker-level prediction agrees with the ground truth.

    ``n`` is the number of speakers correlated; ``n_no_value`` counts speakers that have a
    ground-truth score but no prediction, so a reader sees how much of the dataset a metric
    covers. Every statistic is NaN when ``reason`` is non-empty.
    """

    n: int
    n_no_value: int
    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float
    ci_low: float
    ci_high: float
    aligned_r: float
    aligned_ci_low: float
    aligned_ci_high: float
    reason: str


def _allowlisted_metrics(speakers_long: pd.DataFrame, allowlist: Collection[str]) -> set[str]:
    """The metrics of ``speakers_long`` whose evaluator is on the allowlist.

    The allowlist names measures, not variants: ``wada_snr`` on forced-alignment-trimmed
    audio (``wada_snr_fa``) fails for the same speakers as on untrimmed audio, and PathBench
    likewise maps ``p_estoi_control`` back to ``p_estoi``. The workflow's speakers table names
    each metric's evaluator in its ``evaluator`` column; a table without one (a hand-made or
    external one) has one metric per evaluator, named after it.
    """
    if "evaluator" not in speakers_long.columns:
        return {str(m) for m in speakers_long["metric"].unique() if m in allowlist}
    pairs = speakers_long[["metric", "evaluator"]].drop_duplicates()
    return {str(m) for m, e in pairs.itertuples(index=False) if e in allowlist}


def read_spk2score(path: str | Path) -> pd.Series:
    """Read a Kaldi ``spk2score`` file (``<speaker> <score>`` per line) into a Series.

    ``N/A`` (used for control speakers, who were never rated) becomes NaN. Anything else that
    is not a finite number is an error naming the file and line, since a silently dropped
    speaker would change every correlation of the dataset.
    """
    findings: list[Finding] = []
    table = read_table(Path(path), findings, n_fields=1)
    if findings:
        raise ValueError(str(findings[0]))
    scores: dict[str, float] = {}
    for entry in table.entries.values():
        text = entry.fields[0]
        value = parse_score(text)
        if value is None:
            raise ValueError(
                f"{path}:{entry.line}: score {text!r} of speaker {entry.key!r} is neither a "
                "finite number nor N/A"
            )
        scores[entry.key] = value
    return _speaker_series(scores, "score")


def read_predictions_csv(path: str | Path) -> pd.Series:
    """Read an external predictor's ``speaker_id,score`` CSV into a Series.

    This is PathBench's exchange format for predictors that run outside the benchmark. A
    missing or non-numeric score, a duplicate speaker or a wrong header is an error, because
    any of them would make the reported correlation refer to a different speaker set than the
    one the user believes they submitted.
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: empty file, expected a 'speaker_id,score' header") from None
    frame = frame.apply(lambda column: column.str.strip())
    if list(frame.columns) != ["speaker_id", "score"]:
        raise ValueError(
            f"{path}: header must be 'speaker_id,score', found {','.join(frame.columns)!r}"
        )
    duplicated = sorted(set(frame.loc[frame["speaker_id"].duplicated(), "speaker_id"]))
    if duplicated:
        raise ValueError(f"{path}: duplicate speakers: {', '.join(duplicated)}")
    # Python's float, not pd.to_numeric: that parser is off by an ulp for some 17-digit
    # values, and the exported CSVs must read back as the very floats that were written.
    scores = pd.Series([parse_score(text) for text in frame["score"]], dtype="float64")
    bad = frame.loc[~np.isfinite(scores), "speaker_id"].tolist()
    if bad:
        raise ValueError(f"{path}: no finite numeric score for speakers: {', '.join(bad)}")
    return _speaker_series(dict(zip(frame["speaker_id"], scores, strict=True)), "score")


def _speaker_series(values: Mapping[str, float], name: str) -> pd.Series:
    """A float Series indexed by ``speaker_id``: the one shape every reader here returns."""
    series = pd.Series(values, dtype="float64", name=name)
    series.index = pd.Index(list(values), dtype=object, name="speaker_id")
    return series


def bootstrap_pearson_ci(
    x: np.ndarray, y: np.ndarray, n_boot: int = N_BOOT, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval (``CI_LEVEL``) of Pearson r, resampling speakers.

    Speakers, not utterances, are the unit that was sampled from the population, so they are
    what is resampled. All resamples are drawn at once from ``PCG64(seed)``, so the interval
    is reproducible bit for bit; using one seed for every metric gives metrics on the same
    speaker set the same resamples (paired comparison). Resamples in which one side is
    constant have no r and are dropped; the interval is NaN if none is left.
    """
    rng = np.random.Generator(np.random.PCG64(seed))
    index = rng.integers(0, len(x), size=(n_boot, len(x)))
    xs, ys = x[index], y[index]
    # Detect degenerate resamples on the values themselves: centring a constant row can leave
    # rounding noise that would otherwise yield a spurious r of +-1.
    usable = (np.ptp(xs, axis=1) > 0) & (np.ptp(ys, axis=1) > 0)
    xs, ys = xs[usable], ys[usable]
    if len(xs) == 0:
        return np.nan, np.nan
    xc = xs - xs.mean(axis=1, keepdims=True)
    yc = ys - ys.mean(axis=1, keepdims=True)
    r = (xc * yc).sum(axis=1) / np.sqrt((xc**2).sum(axis=1) * (yc**2).sum(axis=1))
    tail = 100 * (1 - CI_LEVEL) / 2
    low, high = np.percentile(np.clip(r, -1.0, 1.0), [tail, 100 - tail])
    return float(low), float(high)


def _check_direction(direction: int) -> None:
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")


def _check_unique(index: pd.Index, what: str) -> None:
    duplicated = sorted(set(index[index.duplicated()]))
    if duplicated:
        raise ValueError(f"{what} has duplicate speakers: {', '.join(map(str, duplicated))}")


def correlate_predictions(
    predictions: pd.Series,
    ground_truth: pd.Series,
    direction: int = 1,
    *,
    speakers: Iterable[str] | None = None,
    n_boot: int = N_BOOT,
    seed: int = BOOTSTRAP_SEED,
) -> Correlation:
    """Correlate one speaker → prediction Series with the ground truth.

    Speakers with NaN ground truth (controls, ``N/A``) are excluded; NaN predictions count as
    no value. ``speakers`` restricts the analysis further (the common speaker set of
    :func:`correlate_metrics`); ``n_no_value`` still counts against all rated speakers. The
    speakers are sorted first so that the order of the input cannot change the bootstrap.
    """
    _check_direction(direction)
    _check_unique(predictions.index, "predictions")
    _check_unique(ground_truth.index, "ground truth")
    rated = ground_truth.dropna()
    valued = predictions.dropna()
    infinite = sorted(map(str, valued.index[np.isinf(valued.to_numpy(dtype="float64"))]))
    if infinite:
        # NaN means "no value"; an infinity is a bug upstream, not a value to correlate.
        raise ValueError(f"infinite predictions for speakers: {', '.join(infinite)}")
    n_no_value = int((~rated.index.isin(valued.index)).sum())
    used = rated.index.intersection(valued.index)
    if speakers is not None:
        used = used.intersection(pd.Index(list(speakers), dtype=object))
    used = used.sort_values()
    x = valued.loc[used].to_numpy(dtype="float64")
    y = rated.loc[used].to_numpy(dtype="float64")

    reason = ""
    if len(used) < MIN_SPEAKERS:
        reason = f"{len(used)} speaker(s) to correlate, at least {MIN_SPEAKERS} are needed"
    elif np.ptp(x) == 0:
        reason = "the prediction is constant over the speakers correlated"
    elif np.ptp(y) == 0:
        reason = "the ground truth is constant over the speakers correlated"
    if reason:
        return Correlation(
            len(used), n_no_value, **dict.fromkeys(CORRELATION_STATISTICS, np.nan), reason=reason
        )

    from scipy import stats  # ~0.5 s; aggregation and plotting, which share this module, skip it

    r = float(np.corrcoef(x, y)[0, 1])
    rho, rho_p = stats.spearmanr(x, y)
    ci_low, ci_high = bootstrap_pearson_ci(x, y, n_boot=n_boot, seed=seed)
    aligned = sorted((direction * ci_low, direction * ci_high))
    return Correlation(
        n=len(used),
        n_no_value=n_no_value,
        pearson_r=r,
        pearson_p=float(stats.pearsonr(x, y).pvalue),
        spearman_rho=float(rho),
        spearman_p=float(rho_p),
        ci_low=ci_low,
        ci_high=ci_high,
        aligned_r=direction * r,
        aligned_ci_low=aligned[0],
        aligned_ci_high=aligned[1],
        reason="",
    )


def _wide_values(speakers_long: pd.DataFrame) -> pd.DataFrame:
    """Pivot the long speakers table to speaker × metric, refusing duplicate rows."""
    duplicated = speakers_long.duplicated(["speaker_id", "metric"])
    if duplicated.any():
        pairs = speakers_long.loc[duplicated, ["speaker_id", "metric"]].drop_duplicates()
        shown = ", ".join(f"{s}/{m}" for s, m in pairs.itertuples(index=False))
        raise ValueError(f"speakers table has more than one value for speaker/metric: {shown}")
    return speakers_long.pivot(index="speaker_id", columns="metric", values="value").astype(
        "float64"
    )


@dataclass(frozen=True)
class SpeakerSets:
    """Which speakers each metric is correlated on, and why any rated speaker is missing.

    ``used``: metric → sorted speakers correlated. ``excluded``: metric → {speaker: the
    constraining metrics without a value for that speaker}, for every rated speaker that has
    a value for the metric but left its set. ``not_constraining``: metric → why it does not
    shrink the common set (allowlisted, too few values, constant).
    """

    used: dict[str, list[str]]
    excluded: dict[str, dict[str, list[str]]]
    constraining: list[str]
    not_constraining: dict[str, str]
    common: list[str]

    def report(self) -> dict[str, object]:
        """JSON-ready summary (sorted keys come from the JSON writer)."""
        return {
            "speakers": self.common,
            "constraining_metrics": self.constraining,
            "not_constraining": self.not_constraining,
            "excluded_speakers": self.excluded,
        }


def describe_exclusions(excluded: Mapping[str, Collection[str]]) -> str:
    """``S01 (by cpp); S02 (by per, vsa)``: one metric's excluded speakers as table text."""
    return "; ".join(
        f"{speaker} (by {', '.join(sorted(by))})" for speaker, by in sorted(excluded.items())
    )


def analysis_speakers(
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
) -> dict[str, list[str]]:
    """The sorted speakers each metric is correlated on (the common-set rule of the module doc)."""
    return speaker_sets(speakers_long, ground_truth, allowlist).used


def speaker_sets(
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
) -> SpeakerSets:
    """:class:`SpeakerSets` of the long speakers table."""
    allowed = _allowlisted_metrics(speakers_long, allowlist)
    return _speaker_sets(_wide_values(speakers_long), ground_truth, allowed)


def _why_not_constraining(values: pd.Series, allowed: set[str]) -> str:
    """Why a metric's values (rated speakers) do not shrink the common set; '' if they do."""
    if str(values.name) in allowed:
        return "allowlisted: partial speaker coverage allowed"
    present = values.dropna().to_numpy(dtype="float64")
    if len(present) < MIN_SPEAKERS:
        return f"values for {len(present)} rated speaker(s): too few to correlate"
    if np.ptp(present) == 0:
        return "the same value for every speaker: nothing to correlate"
    return ""


def _speaker_sets(values: pd.DataFrame, ground_truth: pd.Series, allowed: set[str]) -> SpeakerSets:
    """:func:`speaker_sets` on the speaker × metric table; ``allowed``: allowlisted metrics."""
    rated = values.reindex(ground_truth.dropna().index.sort_values())
    has_value = rated.notna()
    reasons = {m: _why_not_constraining(rated[m], allowed) for m in sorted(rated.columns)}
    constraining = [m for m, why in reasons.items() if not why]
    missing = {
        speaker: [m for m in constraining if not has_value.at[speaker, m]]
        for speaker in has_value.index
    }
    common = [speaker for speaker, lacking in missing.items() if not lacking]
    used, excluded = {}, {}
    for metric in reasons:
        valued = has_value.index[has_value[metric]]
        allowlisted = metric in allowed
        used[metric] = [s for s in valued if allowlisted or not missing[s]]
        excluded[metric] = {s: missing[s] for s in valued if not allowlisted and missing[s]}
    return SpeakerSets(
        used=used,
        excluded=excluded,
        constraining=constraining,
        not_constraining={m: why for m, why in reasons.items() if why},
        common=common,
    )


def _metadata_by_metric(metadata: pd.DataFrame, metrics: Collection[str]) -> pd.DataFrame:
    """Metadata of ``metrics`` indexed by metric, checked for presence and valid values.

    Only these metrics are checked: the metadata may describe every registered measure,
    including ones this dataset did not run.
    """
    _check_unique(pd.Index(metadata["metric"]), "metrics metadata")
    table = metadata.set_index("metric")
    missing = sorted(set(metrics) - set(table.index))
    if missing:
        raise ValueError(f"metrics metadata has no entry for: {', '.join(missing)}")
    table = table.loc[sorted(metrics)]
    bad_category = sorted(set(table["category"]) - set(CATEGORIES))
    if bad_category:
        raise ValueError(f"unknown metric categories {bad_category}; known: {list(CATEGORIES)}")
    for direction in table["direction"]:
        _check_direction(direction)
    return table


def correlate_metrics(
    speakers_long: pd.DataFrame,
    ground_truth: pd.Series,
    metadata: pd.DataFrame,
    allowlist: Collection[str] = DEFAULT_ALLOWLIST,
    n_boot: int = N_BOOT,
    seed: int = BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """One :class:`Correlation` row per metric of ``speakers_long``, sorted by metric.

    ``speakers_long`` has columns ``speaker_id``, ``metric``, ``value``; ``metadata`` has
    ``metric``, ``direction`` (+1/-1) and ``category``. Columns of the result are
    ``CORRELATION_COLUMNS``; ``n_excluded`` and ``excluded_speakers`` name the rated speakers
    with a value for the metric that the common-set rule left out, and the metrics that did.
    """
    values = _wide_values(speakers_long)
    sets = _speaker_sets(values, ground_truth, _allowlisted_metrics(speakers_long, allowlist))
    meta = _metadata_by_metric(metadata, sets.used)
    rows = []
    for metric in sorted(sets.used):
        direction = int(meta.at[metric, "direction"])
        result = correlate_predictions(
            values[metric],
            ground_truth,
            direction,
            speakers=sets.used[metric],
            n_boot=n_boot,
            seed=seed,
        )
        rows.append(
            {
                "metric": metric,
                "category": meta.at[metric, "category"],
                "direction": direction,
                **asdict(result),
                "n_excluded": len(sets.excluded[metric]),
                "excluded_speakers": describe_exclusions(sets.excluded[metric]),
            }
        )
    return pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS)).astype(
        {"direction": "int64", "n": "int64", "n_no_value": "int64", "n_excluded": "int64"}
    )


def write_correlations(table: pd.DataFrame, path: str | Path, settings: object = None) -> None:
    """Write a :func:`correlate_metrics` table as Parquet with ``CORRELATION_SCHEMA``."""
    write_parquet(table, path, CORRELATION_SCHEMA, sort_by=["metric"], settings=settings)
