import json
import sys
from pathlib import Path

# The job's stderr goes to its log; the findings of a failed validation must also reach the
# user's terminal, so the original stream is kept for them.
console = sys.stderr
sys.stderr = open(snakemake.log[0], "w")

from pathbench_flow.common.staging import stage_job

# Staged dataset files are opened at their copies, and only those (pathbench_flow.common.staging).
stage_job(snakemake)

from pathbench_flow.data.validation import DatasetError
from pathbench_flow.stages.validate import failed_report_path, validate_dataset

try:
    dataset = validate_dataset(
        snakemake.params.directory,
        snakemake.output.manifest,
        snakemake.output.report,
        n_shards=snakemake.params.n_shards,
        test_manifest=getattr(snakemake.input, "test_manifest", None),
        test_directory=getattr(snakemake.params, "test_directory", None),
        score_scale=snakemake.params.score_scale,
        **snakemake.params.settings,
    )
except DatasetError as failure:
    kept = failed_report_path(snakemake.output.report)
    print(f"{failure}\nAll findings: {kept}", file=console, flush=True)
    raise
# How the ratings will be read, where a user whose scale is the other one will see it (a
# reference set of controls rates nobody and says nothing).
ratings = json.loads(Path(snakemake.output.report).read_text(encoding="utf-8"))["ratings"]
if ratings["n_rated_speakers"]:
    print(
        f"dataset {dataset.path}: {ratings['n_rated_speakers']} rated speakers, "
        f"{ratings['summary']}",
        file=console,
        flush=True,
    )
# Warnings do not stop the run, but a user must see them where they look: the console.
warnings = [f for f in dataset.findings if f.severity == "warning"]
if warnings:
    lines = "\n".join(f"  - {finding}" for finding in warnings)
    print(
        f"dataset {dataset.path} has {len(warnings)} warning(s):\n{lines}\n"
        f"All findings: {snakemake.output.report}",
        file=console,
        flush=True,
    )
