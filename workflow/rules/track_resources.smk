# What a track job asks of the scheduler: its priority, memory (a model's grows with the longest
# utterance it reads, an n-gram decoding's with its LM), time and GPU (track_plan.smk plans the
# tracks; settings.smk holds the RESOURCES table).

from functools import cache
from pathlib import Path

FIRST = 10
"""Scheduling priority of the jobs that gate the longest ones: trimming, the speaker-scoring
jobs and the tracks they read."""
EARLY = 5
"""Priority of the jobs many others wait for (tracks, open-set features): before the short
scoring jobs (priority 0), which fill the cores at the end of a run."""


def track_priority(name):
    """Scheduling priority of a track's jobs. Tracks feed most scoring jobs and the CPPS track
    is a run's longest per-shard job (~20 s a shard on a UASpeech-sized corpus), so tracks
    come before the short jobs that read them, which then fill the cores at the end (EARLY).
    First of all come the tracks a speaker-scoring job reads (FIRST): that job waits for every
    shard's and is the longest of a run (`vsa`: 50 s), so the sooner they exist the sooner it
    runs beside the per-shard jobs instead of alone at the end."""
    readers = TRACK_READERS.get(name, [])
    return FIRST if any(reader in SPEAKER_EVALUATORS for reader in readers) else EARLY


def track_resources(name):
    """A track job's memory and time: a model's when it runs one."""
    runs_model = planned_track(name).track.runs_model
    return RESOURCES["compute_model_track" if runs_model else "compute_track"]


def track_memory(wildcards, input):
    """A track job's ``mem_mb``; a model's grows with the longest utterance of the manifest
    slices the job reads (pathbench_flow/memory.py). Before the shard checkpoint has written
    them (a dry run's plan), or evaluated without a job's named inputs, it is the table's;
    Snakemake evaluates resources again before it starts a job, once its inputs exist.
    An n-gram transcription job declares at least what its LM needs (lm_memory).
    """
    track = planned_track(wildcards.track).track
    declared = track_resources(wildcards.track)["mem_mb"]
    if not track.runs_model:
        return declared
    manifests = list(getattr(input, "manifests", []))
    if manifests and all(Path(path).exists() for path in manifests):
        declared = model_track_memory(declared, longest_utterance_s(manifests))
    return max(declared, lm_memory(track))


def lm_memory(track):
    """The memory of a track's n-gram decoding (0 for a track that decodes none): a job's
    (RESOURCES' compute_track) and the LM's (pathbench_flow/memory.py, lm_job_memory), sized
    from the file the decoder opens, else the fetch record, else the fetch lock. The job
    reads the ASR log-posteriors from the ASR track's file, so no model runs beside the LM.
    """
    configured = dict(track.arguments).get("lm")
    if configured is None:
        return 0
    return RESOURCES["compute_track"]["mem_mb"] + lm_job_memory(
        configured, opened_lm_file(configured), LM_RECORD_SUFFIX, fetch_lock()
    )


@cache
def fetch_lock():
    """The fetch lock, read once: resources are evaluated on every scheduling pass."""
    return lock(FETCH_LOCK)


def track_gpu(name):
    """A model track's job asks for a GPU when a measure reading it would (uses_gpu)."""
    return gpu_request(
        any(
            EVALUATOR_INFO[reader].cls.uses_gpu(evaluator_options(reader))
            for reader in TRACK_READERS.get(name, [])
        )
    )
