"""Cepstral peak prominence (CPP) and its smoothed, Praat-defined variant (CPPS).

A periodic voice has a harmonic spectrum, whose log spectrum ripples at the F0 spacing; the
cepstrum turns that ripple into a peak at quefrency 1/F0. The peak's height above the
cepstrum's overall trend ("prominence") falls as aspiration noise, jitter and shimmer blur the
harmonics, which is why CPP/CPPS track dysphonia and, in pathological speech, intelligibility.

Three measures, one module each:

* :func:`cpp` (:mod:`.pathbench_cpp`) reproduces PathBench's frame-wise CPP (its framing,
  window and linear cepstrum, hence values in the hundreds).
* :func:`cpps_praat` (:mod:`.praat_reference`) is the reference CPPS: Praat's
  "To PowerCepstrogram" and "Get CPPS" run through parselmouth with the settings in
  :mod:`.praat_settings`.
* :func:`cpps` (:mod:`.smoothed`) recomputes that Praat value with numpy: Praat's power
  cepstrogram (:mod:`.power_cepstrogram`), its smoothing (:mod:`.smoothing`) and its robust
  tilt line (:mod:`.theil_sen`, counting pairs with :mod:`.pair_counts` instead of sorting
  ~300 000 slopes per frame).

All three take audio at :data:`pathbench_flow.SAMPLE_RATE`; at that rate Praat analyses the samples
as given (its maximum frequency of 8 kHz needs no resampling), so numpy and Praat see the same
signal.
"""

from typing import Any

from pathbench_flow.measures.cepstral.pathbench_cpp import cpp
from pathbench_flow.measures.cepstral.smoothed import cpps

__all__ = ["cpp", "cpps", "cpps_praat"]


def __getattr__(name: str) -> Any:
    """``cpps_praat`` on first use: the ``cpp`` and ``cpps`` jobs never load parselmouth."""
    if name == "cpps_praat":
        from pathbench_flow.measures.cepstral.praat_reference import cpps_praat

        return cpps_praat
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
