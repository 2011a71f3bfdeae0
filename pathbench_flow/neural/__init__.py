"""PathBench's model-based measures: wav2vec2 CTC models read from the user's own disk.

The package is split by concern so that only :mod:`pathbench_flow.neural.models` (and the optional
language-model decoder in :mod:`pathbench_flow.neural.lm`) import torch, transformers, kenlm or
pyctcdecode, and only when a model is actually loaded: importing the evaluator registry never
pulls them in, and a machine without the ``neural`` extra runs every other measure.

- :mod:`~pathbench_flow.neural.models`: where a model is (a directory or the local Hugging Face
  cache, never the network), loading it once per process, batched inference.
- :mod:`~pathbench_flow.neural.phonemes`: PathBench's text cleaning and espeak-ng phonemisation.
- :mod:`~pathbench_flow.neural.ctc`: CTC forced alignment, greedy decoding and the scores built on
  them (numpy only).
- :mod:`~pathbench_flow.neural.lm`: n-gram language-model beam search (pyctcdecode + kenlm).
"""
