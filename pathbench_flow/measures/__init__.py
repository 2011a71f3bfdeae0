"""Intelligibility measures: per-signal (cacheable) feature steps and comparison steps."""
