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
sampling error of r is large and a ranking without it is misleading. Its resamples without an
r are those of the uncertainty stage's bootstrap (:mod:`pathbench_flow.stats.resampled_r`),
and the share of them flags an interval by the same limit. A metric or utterance set is
correlated only with ``MIN_SPEAKERS`` speakers (utterances) or more.

Where a dataset rates single utterances (``utt2score``, as PathBench's YouTube and NeuroVoz
sets do), :func:`utterance_correlations` gives PathBench's utterance-level r beside the
speaker-level one, on one common set of utterances built by the same rule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from pathbench_flow.common.io import write_parquet
from pathbench_flow.common.seeds import BOOTSTRAP_SEED
from pathbench_flow.data.kaldi import Finding, parse_score, read_table
from pathbench_flow.evaluators import categories
from pathbench_flow.schemas.tables import CORRELATION_SCHEMA, CORRELATION_STATISTICS
from pathbench_flow.stats.resampled_r import MIN_SPEAKERS, UNDEFINED_LIMIT, draw_counts, weighted_r

DEFAULT_ALLOWLIST: tuple[str, ...] = ("wada_snr", "spk2age")
"""Evaluators whose metrics are allowed partial speaker coverage (PathBench's allowlist)."""

N_BOOT = 20_000
"""Bootstrap resamples: the uncertainty stage's count, so that with one dataset, whose Avg is
its r, the two intervals are one (the same seed, draws and rule give the same bounds); about
2 s a dataset, against 0.3 s at 2,000, whose bounds move by ~0.01 between seeds."""
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
    ci_undefined_share: float
    """Share of the bootstrap's resamples without an r, which the interval leaves out."""
    ci_flagged: bool
    """Whether that share exceeds ``UNDEFINED_LIMIT``: the interval then describes only the
    resamples in which the metric varies."""
    interval: str
    """Which interval ``ci_low``/``ci_high`` are (:func:`interval_name`); '' without one."""
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
    return _read_scores(path, "speaker", "speaker_id")


def read_utt2score(path: str | Path) -> pd.Series:
    """Read a Kaldi ``utt2score`` file (``<utterance> <score>``) into a Series by ``utt_id``.

    Its lines are checked as ``spk2score``'s are (:func:`read_spk2score`): ``N/A`` is an
    unrated utterance (NaN), any other value that is not a finite number is an error.
    """
    return _read_scores(path, "utterance", "utt_id")


def _read_scores(path: str | Path, unit: str, index: str) -> pd.Series:
    """A ``<key> <score>`` file through the validation's parser (:func:`read_table`,
    :func:`parse_score`), every bad line in one error; warnings (a byte-order mark) pass."""
    findings: list[Finding] = []
    table = read_table(Path(path), findings, n_fields=1)
    problems = [str(f) for f in findings if f.severity == "error"]
    scores: dict[str, float] = {}
    for entry in table.entries.values():
        text = entry.fields[0]
        value = parse_score(text)
        if value is None:
            problems.append(
                f"{path}:{entry.line}: score {text!r} of {unit} {entry.key!r} is neither a "
                "finite number nor N/A"
            )
        else:
            scores[entry.key] = value
    if problems:
        raise ValueError("\n".join(problems))
    return _keyed_series(scores, "score", index)


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
    return _keyed_series(dict(zip(frame["speaker_id"], scores, strict=True)), "score")


def _keyed_series(values: Mapping[str, float], name: str, index: str = "speaker_id") -> pd.Series:
    """A float Series indexed by ``index`` (``speaker_id``, ``utt_id``): the one shape every
    reader here returns."""
    series = pd.Series(values, dtype="float64", name=name)
    series.index = pd.Index(list(values), dtype=object, name=index)
    return series


class BootstrapInterval(NamedTuple):
    """A percentile bootstrap interval of r and the share of resamples it left out."""

    low: float
    high: float
    undefined_share: float
    """Share of the resamples without an r (:func:`weighted_r`'s rule)."""

    @property
    def flagged(self) -> bool:
        """More than ``UNDEFINED_LIMIT`` of the resamples had no r."""
        return bool(self.undefined_share > UNDEFINED_LIMIT)


def interval_name(n_boot: int, level: float = CI_LEVEL) -> str:
    """What every output of the correlation stage calls its interval of r."""
    return (
        f"percentile bootstrap over speakers, {100 * level:g} %, {n_boot:,} resamples where r "
        "is defined"
    )


def bootstrap_pearson_ci(
    x: np.ndarray, y: np.ndarray, n_boot: int = N_BOOT, seed: int = BOOTSTRAP_SEED
) -> BootstrapInterval:
    """Percentile bootstrap interval (``CI_LEVEL``) of Pearson r, resampling speakers.

    Speakers, not utterances, are the unit that was sampled from the population, so they are
    what is resampled. All resamples are drawn at once from ``PCG64(seed)``, as the
    uncertainty stage draws a corpus, so the interval is reproducible bit for bit; using one
    seed for every metric gives metrics on the same speaker set the same resamples (paired
    comparison). A resample without an r (:func:`weighted_r`: fewer than ``MIN_SPEAKERS``
    distinct speakers, or one side constant) is left out and counted, not drawn again; the
    interval is NaN if no resample has an r.
    """
    counts = draw_counts(np.random.Generator(np.random.PCG64(seed)), len(x), n_boot)
    r = weighted_r(counts, np.asarray(x, float)[:, None], np.asarray(y, float))[:, 0]
    defined = r[np.isfinite(r)]
    undefined = float(np.mean(~np.isfinite(r)))
    if len(defined) == 0:
        return BootstrapInterval(np.nan, np.nan, undefined)
    tail = 100 * (1 - CI_LEVEL) / 2
    low, high = np.percentile(defined, [tail, 100 - tail])
    return BootstrapInterval(float(low), float(high), undefined)


def _check_direction(direction: int) -> None:
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")


def _check_unique(index: pd.Index, what: str) -> None:
    duplicated = sorted(set(index[index.duplicated()]))
    if duplicated:
        raise ValueError(f"{what} has duplicate speakers: {', '.join(map(str, duplicated))}")


def _refuse_infinite(values: pd.Series, units: str) -> None:
    """NaN means "no value"; an infinity is a bug upstream, not a value to correlate."""
    infinite = sorted(map(str, values.index[np.isinf(values.to_numpy(dtype="float64"))]))
    if infinite:
        raise ValueError(f"infinite predictions for {units}: {', '.join(infinite)}")


def _no_correlation_reason(x: np.ndarray, y: np.ndarray, unit: str) -> str:
    """Why the values ``x`` and ground truth ``y`` of some ``unit``s have no r; '' if they do."""
    if len(x) < MIN_SPEAKERS:
        return f"{len(x)} {unit}(s) to correlate, at least {MIN_SPEAKERS} are needed"
    if np.ptp(x) == 0:
        return f"the prediction is constant over the {unit}s correlated"
    if np.ptp(y) == 0:
        return f"the ground truth is constant over the {unit}s correlated"
    return ""


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
    _refuse_infinite(valued, "speakers")
    n_no_value = int((~rated.index.isin(valued.index)).sum())
    used = rated.index.intersection(valued.index)
    if speakers is not None:
        used = used.intersection(pd.Index(list(speakers), dtype=object))
    used = used.sort_values()
    x = valued.loc[used].to_numpy(dtype="float64")
    y = rated.loc[used].to_numpy(dtype="float64")

    reason = _no_correlation_reason(x, y, "speaker")
    if reason:
        return Correlation(
            len(used),
            n_no_value,
            **dict.fromkeys(CORRELATION_STATISTICS, np.nan),
            ci_flagged=False,
            interval="",
            reason=reason,
        )

    from scipy import stats  # ~0.5 s; aggregation and plotting, which share this module, skip it

    r = float(np.corrcoef(x, y)[0, 1])
    rho, rho_p = stats.spearmanr(x, y)
    ci = bootstrap_pearson_ci(x, y, n_boot=n_boot, seed=seed)
    aligned = sorted((direction * ci.low, direction * ci.high))
    return Correlation(
        n=len(used),
        n_no_value=n_no_value,
        pearson_r=r,
        pearson_p=float(stats.pearsonr(x, y).pvalue),
        spearman_rho=float(rho),
        spearman_p=float(rho_p),
        ci_low=ci.low,
        ci_high=ci.high,
        aligned_r=direction * r,
        aligned_ci_low=aligned[0],
        aligned_ci_high=aligned[1],
        ci_undefined_share=ci.undefined_share,
        ci_flagged=ci.flagged,
        interval=interval_name(n_boot) if np.isfinite(ci.low) else "",
        reason="",
    )


def wide_values(
    long: pd.DataFrame, unit: str = "speaker_id", value: str = "value", what: str = "speakers"
) -> pd.DataFrame:
    """Pivot a long table (the speakers table; utterance scores) to ``unit`` × metric,
    refusing duplicate rows."""
    duplicated = long.duplicated([unit, "metric"])
    if duplicated.any():
        pairs = long.loc[duplicated, [unit, "metric"]].drop_duplicates()
        shown = ", ".join(f"{s}/{m}" for s, m in pairs.itertuples(index=False))
        raise ValueError(f"{what} table has more than one value for {unit}/metric: {shown}")
    return long.pivot(index=unit, columns="metric", values=value).astype("float64")


@dataclass(frozen=True)
class SpeakerSets:
    """Which speakers each metric is correlated on, and why any rated speaker is missing.

    At the utterance level (:func:`utterance_correlations`) the same fields hold utterances.

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
    return _common_sets(wide_values(speakers_long), ground_truth, allowed)


def _why_not_constraining(values: pd.Series, allowed: set[str], unit: str) -> str:
    """Why a metric's values (rated units) do not shrink the common set; '' if they do."""
    if str(values.name) in allowed:
        return f"allowlisted: partial {unit} coverage allowed"
    present = values.dropna().to_numpy(dtype="float64")
    if len(present) < MIN_SPEAKERS:
        return f"values for {len(present)} rated {unit}(s): too few to correlate"
    if np.ptp(present) == 0:
        return f"the same value for every {unit}: nothing to correlate"
    return ""


def _common_sets(
    values: pd.DataFrame, ground_truth: pd.Series, allowed: set[str], unit: str = "speaker"
) -> SpeakerSets:
    """:func:`speaker_sets` on a ``unit`` × metric table (speakers, or utterances at the
    utterance level); ``allowed``: allowlisted metrics."""
    rated = values.reindex(ground_truth.dropna().index.sort_values())
    has_value = rated.notna()
    reasons = {m: _why_not_constraining(rated[m], allowed, unit) for m in sorted(rated.columns)}
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
    categories.require_known(table["category"])
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
    values = wide_values(speakers_long)
    sets = _common_sets(values, ground_truth, _allowlisted_metrics(speakers_long, allowlist))
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


UTTERANCE_CORRELATION_COLUMNS: tuple[str, ...] = (
    "metric",
    "category",
    "direction",
    "n",
    "n_speakers",
    "n_no_value",
    "n_excluded",
    "pearson_r",
    "spearman_rho",
    "aligned_r",
    "reason",
    "excluded_by",
)
"""Columns of :func:`utterance_correlations`: ``n`` utterances correlated, from ``n_speakers``
speakers."""


def utterance_correlations(
    scores_long: pd.DataFrame, utt2score: pd.Series, metadata: pd.DataFrame
) -> pd.DataFrame:
    """Utterance-level Pearson r of every metric with ``utt2score``, as PathBench's
    ``scripts/evaluate_utt2score.py`` computes it; one row per metric, sorted by metric.

    ``scores_long`` holds utterance scores (``utt_id``, ``speaker_id``, ``metric``, ``score``;
    NaN is no value), ``utt2score`` the rating of every utterance of the dataset (NaN: none),
    ``metadata`` as for :func:`correlate_metrics`. As in PathBench, every metric is
    correlated on one set: the rated utterances with a value for every metric, with no
    allowlist; r is ``np.corrcoef``'s, unaligned, and ``aligned_r`` is ``direction × r``.
    Where PathBench's results would be meaningless this follows the speaker level instead: an
    unrated (``N/A``) utterance leaves the set (in PathBench its NaN turns every r into NaN),
    a metric with fewer than ``MIN_SPEAKERS`` values or one constant value does not shrink
    the set (in PathBench it could empty it), and both reference sets share the one set
    (PathBench runs once per reference set). Spearman's rho is given too; p-values and a
    bootstrap interval are not, because a speaker's utterances are not independent samples
    and statistics that treat them as such would overstate the certainty.
    ``excluded_by`` counts, per constraining metric, the utterances that metric removed.
    """
    if scores_long.empty:
        return pd.DataFrame(columns=list(UTTERANCE_CORRELATION_COLUMNS))
    values = wide_values(scores_long, "utt_id", "score", "utterance scores")
    for metric in values.columns:
        _refuse_infinite(values[metric].dropna(), f"utterances ({metric})")
    speaker_of = scores_long.drop_duplicates("utt_id").set_index("utt_id")["speaker_id"]
    sets = _common_sets(values, utt2score, set(), "utterance")
    meta = _metadata_by_metric(metadata, sets.used)
    rated = utt2score.dropna().index
    rows = []
    for metric in sorted(sets.used):
        used = sets.used[metric]
        x = values.loc[used, metric].to_numpy(dtype="float64")
        y = utt2score.loc[used].to_numpy(dtype="float64")
        reason = _no_correlation_reason(x, y, "utterance")
        r = rho = np.nan
        if not reason:
            from scipy import stats  # as in correlate_predictions: only when there is an r

            r = float(np.corrcoef(x, y)[0, 1])
            rho = float(stats.spearmanr(x, y).statistic)
        direction = int(meta.at[metric, "direction"])
        removed = pd.Series([m for by in sets.excluded[metric].values() for m in by])
        rows.append(
            {
                "metric": metric,
                "category": meta.at[metric, "category"],
                "direction": direction,
                "n": len(used),
                "n_speakers": speaker_of.loc[used].nunique(),
                "n_no_value": int((~rated.isin(values.index[values[metric].notna()])).sum()),
                "n_excluded": len(sets.excluded[metric]),
                "pearson_r": r,
                "spearman_rho": rho,
                "aligned_r": direction * r,
                "reason": reason,
                "excluded_by": "; ".join(
                    f"{m}: {n}" for m, n in sorted(removed.value_counts().items())
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(UTTERANCE_CORRELATION_COLUMNS))


def write_correlations(table: pd.DataFrame, path: str | Path, settings: object = None) -> None:
    """Write a :func:`correlate_metrics` table as Parquet with ``CORRELATION_SCHEMA``."""
    write_parquet(table, path, CORRELATION_SCHEMA, sort_by=["metric"], settings=settings)
