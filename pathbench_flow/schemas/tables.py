"""The Arrow schemas of the workflow's Parquet tables, in the order the stages write them.

Column types and order are part of every output's bytes, so each table's schema is defined
here once and the stages that write or read the table import it. The open-set stage's tables
are described next to their frozen feature list in :mod:`pathbench_flow.schemas.openset` and
:mod:`pathbench_flow.openset.evaluate`.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

MANIFEST_SCHEMA = pa.schema(
    [
        ("utt_id", pa.string()),
        ("speaker_id", pa.string()),
        ("recording_id", pa.string()),
        ("group_id", pa.string()),
        ("audio_path", pa.string()),
        ("start", pa.float64()),
        ("end", pa.float64()),
        ("text", pa.string()),
        ("text_clean", pa.string()),
        ("gender", pa.string()),
        ("language", pa.string()),
        ("duration_s", pa.float64()),
        ("sample_rate", pa.int32()),
        ("channels", pa.int16()),
        ("audio_sha256", pa.string()),
        ("score", pa.float64()),
        ("shard", pa.int32()),
    ]
)
"""``manifest.parquet`` and its per-shard slices: one validated utterance per row."""

TRIM_SCHEMA = pa.schema(
    [
        ("utt_id", pa.string()),
        ("backend", pa.string()),
        ("status", pa.string()),
        ("trim_start_s", pa.float64()),
        ("trim_end_s", pa.float64()),
        ("n_words_aligned", pa.int32()),
        ("message", pa.string()),
    ]
)
"""``trim/<shard>.parquet``: the speech boundaries of each utterance."""

_KEY_COLUMNS = [
    ("metric", pa.string()),
    ("evaluator", pa.string()),
    ("variant", pa.string()),
]
_VALUE_COLUMNS = [
    ("score", pa.float64()),
    ("status", pa.string()),
    ("message", pa.string()),
]
SCORE_SCHEMA = pa.schema(
    [("utt_id", pa.string()), ("speaker_id", pa.string()), *_KEY_COLUMNS, *_VALUE_COLUMNS]
)
"""``scores/<evaluator>/<shard>.parquet``: one row per utterance and variant."""
REFERENCE_SCORE_SCHEMA = pa.schema(
    [*SCORE_SCHEMA, ("reference_type", pa.string()), ("n_references", pa.int32())]
)
"""``reference_scores/<evaluator>/<type>/<shard>.parquet``."""
SPEAKER_SCORE_SCHEMA = pa.schema(
    [("speaker_id", pa.string()), *_KEY_COLUMNS, ("n_utterances", pa.int32()), *_VALUE_COLUMNS]
)
"""``speaker_scores/<evaluator>.parquet``: speaker-level evaluators."""

SPEAKERS_SCHEMA = pa.schema(
    [
        ("speaker_id", pa.string()),
        ("metric", pa.string()),
        ("evaluator", pa.string()),
        ("variant", pa.string()),
        ("value", pa.float64()),
        ("n_utterances", pa.int32()),
        ("n_scored", pa.int32()),
        ("ground_truth", pa.float64()),
    ]
)
"""``speakers.parquet``: one value per speaker and metric; ``ground_truth`` is the speaker's
rating on the intelligibility scale (``spk2score``, negated for a dataset with ``score_scale:
severity``, :mod:`pathbench_flow.data.score_scale`)."""

CORRELATION_STATISTICS = (
    "pearson_r",
    "pearson_p",
    "spearman_rho",
    "spearman_p",
    "ci_low",
    "ci_high",
    "aligned_r",
    "aligned_ci_low",
    "aligned_ci_high",
    "ci_undefined_share",
)
"""The float columns of a correlation row, NaN together when a metric is not correlated."""
CORRELATION_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("category", pa.string()),
        ("direction", pa.int64()),
        ("n", pa.int64()),
        ("n_no_value", pa.int64()),
        ("n_excluded", pa.int64()),
        *[(name, pa.float64()) for name in CORRELATION_STATISTICS],
        ("ci_flagged", pa.bool_()),
        ("interval", pa.string()),
        ("reason", pa.string()),
        ("excluded_speakers", pa.string()),
    ]
)
"""``correlations.parquet``: Parquet schema of a ``correlate_metrics`` table."""

RESULTS_ROW_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("row", pa.string()),
        ("category", pa.string()),
        ("in_pathbench_table", pa.bool_()),
        ("sign", pa.int64()),
        ("sign_rule", pa.string()),
    ]
)
"""The columns of ``results_table.parquet`` that describe a row; one column per dataset
follows (:func:`results_table_schema`)."""
AVERAGE_COLUMN = "Avg"
AVERAGE_UNROUNDED_COLUMN = "Avg_unrounded"
"""The mean of a row's unrounded cells: the Avg the speaker bootstrap's interval is of."""
AVERAGE_INTERVAL_COLUMNS = ("Avg_ci_low", "Avg_ci_high")
"""The speaker bootstrap's interval of the unrounded Avg (``pathbench_flow.stats.uncertainty``)."""
COUNT_COLUMN = "n_datasets"


def results_table_schema(dataset_columns: Iterable[str], interval: bool = False) -> pa.Schema:
    """``results_table.parquet``: the row columns, one float column per dataset (in table
    order), then PathBench's average, the unrounded average and its bootstrap interval
    (``interval``: the workflow's table has them, a table built from correlations alone does
    not) and the number of datasets it is over."""
    return pa.schema(
        [
            *RESULTS_ROW_SCHEMA,
            *[(column, pa.float64()) for column in dataset_columns],
            (AVERAGE_COLUMN, pa.float64()),
            *[
                (column, pa.float64())
                for column in (AVERAGE_UNROUNDED_COLUMN, *AVERAGE_INTERVAL_COLUMNS)
                if interval
            ],
            (COUNT_COLUMN, pa.int64()),
        ]
    )
