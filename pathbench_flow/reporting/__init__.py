"""What a user reads: the results table, speaker CSVs and plots."""
