"""Statistics on speaker scores: correlation with the ground truth and Wilcoxon comparisons."""
