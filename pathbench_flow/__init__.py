"""pathbench_flow: intelligibility measures for pathological speech and the workflow around them."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pathbench-flow")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

SAMPLE_RATE = 16000
"""Every evaluator receives mono float audio at this rate; loading resamples once."""
