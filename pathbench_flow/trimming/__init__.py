"""FA trimming: finding where speech starts and ends (energy, pocketsphinx, wav2vec2) and replaying
stored boundaries for the trimmed variants."""
