"""A user's own intelligibility predictor, benchmarked beside the built-in measures.

PathBench's first use case is a predictor developed elsewhere: its scores arrive as a
``speaker_id,score`` CSV per dataset and are correlated with ``spk2score``. In the workflow a
predictor (config ``predictors``) becomes a metric like any evaluator's: its CSV is checked
when the workflow is parsed (:mod:`~pathbench_flow.predictors.check`), turned into the score
table an evaluator writes (:mod:`pathbench_flow.stages.predictors`), and from there it takes
the same path through aggregation, correlation, the results table, plots and report. On top,
it is tested against the best built-in measure of each category
(:mod:`~pathbench_flow.predictors.comparisons`).
"""
