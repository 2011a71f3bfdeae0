"""Datasets: Kaldi files, their validation, the manifest and the per-shard plans built from it."""
