"""The ground floor every other package stands on: audio and transcripts, languages, result
files, a job's staged inputs, seeds, lazy imports and why a measure has no value.

Nothing here imports another package of pathbench_flow, so any layer may import it.
"""
