"""The fixed seeds of everything random in pathbench-flow, so reruns are byte-identical.

The workflow's config schema (``workflow/schemas/config.schema.yaml``) repeats these as its
defaults, since YAML cannot import them; ``tests/test_constants.py`` keeps the two equal.
"""

DEMO_SEED = 20260101
"""Seed of the synthetic demo corpus: the same seed gives byte-identical audio."""
BOOTSTRAP_SEED = 20260101
"""Seed of the bootstrap confidence interval of r: the same input gives the same interval."""
