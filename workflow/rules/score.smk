rule score_utterances:
    input:
        fetched=fetched_by_reader,  # its models and LMs, when fetching is on (fetch.smk)
        manifest=shard_rows,
        trims=utterance_trims,
        audio=declared_audio(shard_audio_files),
        tracks=utterance_tracks,
        dataset=context_files,
        espeak=lambda wc: espeak_build(phonemises(wc.evaluator)),
    output:
        "results/{dataset}/scores/{evaluator}/{shard}.parquet",
    log:
        "logs/{dataset}/score_utterances/{evaluator}/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["score_utterances"],
        gpu=lambda wc: gpu_request(
            EVALUATOR_INFO[wc.evaluator].cls.uses_gpu(evaluator_options(wc.evaluator))
        ),
    params:
        options=lambda wc: evaluator_options(wc.evaluator),
        variants=lambda wc: variants(wc.evaluator),
        context=lambda wc: {"dataset_dir": str(dataset_dir(wc.dataset))},
        version=VERSION,
    script:
        "../../scripts/score_utterances.py"


# Every shard's rows rather than the manifest: read from the shard checkpoint, the job is
# decided again after it, so a rewrite that changed no slice (an edit in the reference set)
# leaves it alone.
rule score_speakers:
    input:
        manifest=lambda wc: shard_slices(wc.dataset),
        trims=speaker_trims,
        audio=declared_audio(dataset_audio_files),
        tracks=speaker_tracks,
        espeak=lambda wc: espeak_build(phonemises(wc.evaluator)),
    output:
        "results/{dataset}/speaker_scores/{evaluator}.parquet",
    log:
        "logs/{dataset}/score_speakers/{evaluator}.log",
    # One job reads the whole dataset and is often the longest: started as soon as its inputs
    # exist, it does not leave a core idle at the end of the run.
    priority: FIRST
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["score_speakers"],
    params:
        options=lambda wc: evaluator_options(wc.evaluator),
        variants=lambda wc: variants(wc.evaluator),
        version=VERSION,
    script:
        "../../scripts/score_speakers.py"


# Per shard, variant and reference type. Its utterances' references come from every shard of
# a set, so it reads set tracks (tracks.smk).
rule score_reference:
    input:
        fetched=fetched_by_reader,  # its models and LMs, when fetching is on (fetch.smk)
        manifest=reference_job_rows,
        reference="results/{dataset}/shards/{shard}.reference_related.parquet",
        trims=reference_trims,
        audio=declared_audio(scored_reference_audio),
        tracks=reference_tracks,
        espeak=lambda wc: espeak_build(phonemises(wc.evaluator)),
    output:
        "results/{dataset}/reference_scores/{evaluator}/{variant}/{reftype}/{shard}.parquet",
    log:
        "logs/{dataset}/score_reference/{evaluator}/{variant}/{reftype}/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["score_reference"],
        gpu=lambda wc: gpu_request(
            EVALUATOR_INFO[wc.evaluator].cls.uses_gpu(evaluator_options(wc.evaluator))
        ),
    params:
        options=lambda wc: evaluator_options(wc.evaluator),
        shared_speaker_ids=config["validation"]["shared_speaker_ids"],
        version=VERSION,
    script:
        "../../scripts/score_reference.py"
