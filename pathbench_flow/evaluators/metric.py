"""What identifies a metric: the evaluator, the audio variant it scored, the reference set.

The scoring stage applies a variant (``raw`` audio, or ``fa``: forced-alignment-trimmed audio)
and, for reference-audio evaluators, a reference type to a registered evaluator; results keep
the three parts in the columns ``evaluator``, ``variant`` and ``reference_type``. The name a
metric carries in tables and file names (``cpp``, ``cpp_fa``, ``p_estoi_fa_control``) is
derived from them by :attr:`MetricKey.name`, the only place a name is built, and no code
parses a name back into its parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from pathbench_flow.data.references import REFERENCE_TYPES

RAW, FA = "raw", "fa"
VARIANTS: tuple[str, ...] = (RAW, FA)
"""Every variant, in the order their rows are written."""


@dataclass(frozen=True)
class MetricKey:
    """One metric: ``evaluator`` scored on ``variant`` audio against ``reference_type``
    references (empty for evaluators that use no reference recordings)."""

    evaluator: str
    variant: str = RAW
    reference_type: str = ""

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown variant {self.variant!r}; known: {', '.join(VARIANTS)}")
        if self.reference_type not in ("", *REFERENCE_TYPES):
            raise ValueError(
                f"unknown reference type {self.reference_type!r}; "
                f"known: {', '.join(REFERENCE_TYPES)}"
            )

    @property
    def name(self) -> str:
        """``evaluator[_fa][_reference_type]``: the raw variant keeps the evaluator's name,
        which is PathBench's naming (``cpp`` and ``cpp_fa``, ``nad_all`` and ``nad_fa_all``)."""
        parts = (self.evaluator, "" if self.variant == RAW else self.variant, self.reference_type)
        return "_".join(part for part in parts if part)
