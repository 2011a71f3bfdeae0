# Runs whose jobs share no file system with this process (docs/clusters.md, "Running without a
# shared file system"): a job sees only its inputs, staged from the storage provider, so the facts
# the DAG is planned from (which Kaldi files a dataset has, its audio, its size) are gathered here
# once and shipped to the jobs as a config file of the workflow's sources (the config key
# FACTS_KEY). Everywhere else the datasets are read directly.
import yaml

from pathbench_flow.data.facts import FACTS_KEY, DatasetFacts, gather
from pathbench_flow.common.io import atomic_path

SHIPPED_FACTS = ".snakemake/pathbench/dataset_facts.yaml"

if workflow.storage_settings.default_storage_provider is not None:
    if workflow.is_main_process:
        _directories = [
            directory
            for name in DATASETS
            for directory in (dataset_dir(name), reference_dir(name))
            if directory is not None and not is_generated(directory)
        ]
        with atomic_path(SHIPPED_FACTS) as _partial:
            _partial.write_text(
                yaml.safe_dump(gather(_directories, (*KALDI_FILES, "utt2score")))
            )

    configfile: SHIPPED_FACTS


# The main process plans from the facts it ships, so that its jobs' inputs and theirs agree
# (the audio need only be in the bucket). The demo's directories are written by a checkpoint
# (demo.smk): always read where they are.
FACTS = DatasetFacts(config.get(FACTS_KEY), read_from_disk=is_generated)

# Whether the jobs that read audio list it among their inputs. Staged jobs must, to get it.
# On a shared file system, validation has read every byte and put each recording's SHA-256 in
# the manifest, so an edited recording changes the rows of its shard and reruns exactly the
# jobs that read it; listing the audio as well would only make Snakemake stat every file of
# every waiting job at each job selection (tens of thousands per selection on a UASpeech-sized
# corpus). Without audio checks the manifest has no digests, and the audio stays listed.
AUDIO_DECLARED = FACTS_KEY in config or not config["validation"]["check_audio"]


def declared_audio(files):
    """The input function ``files``, or none where the jobs need not declare their audio
    (AUDIO_DECLARED)."""

    def audio(wildcards):
        return files(wildcards) if AUDIO_DECLARED else []

    return audio


def test_set_hashes(wildcards):
    """The test set's wav_hash.scp, which a reference set's validation compares with."""
    directory = dataset_dir(wildcards.dataset)
    return (
        [str(directory / "wav_hash.scp")]
        if FACTS.has(directory, "wav_hash.scp")
        else []
    )


def context_files(wildcards):
    """The dataset files an evaluator reads through its ``dataset_dir`` context (spk2age)."""
    info = EVALUATOR_INFO[wildcards.evaluator]
    if "dataset_dir" not in info.cls.context_options:
        return []
    directory = dataset_dir(wildcards.dataset)
    return [
        str(directory / name)
        for name in info.cls.dataset_files
        if FACTS.has(directory, name)
    ]
