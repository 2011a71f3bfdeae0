rule score_utterances:
    input:
        manifest="results/{dataset}/manifest.parquet",
        trims=lambda wc: trim_tables(wc.dataset),
    output:
        "results/{dataset}/scores/{evaluator}/{shard}.parquet",
    log:
        "logs/{dataset}/score_utterances/{evaluator}/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        options=lambda wc: config["evaluator_options"].get(wc.evaluator, {}),
        variants=lambda wc: variants(wc.evaluator),
        context=lambda wc: {"dataset_dir": str(dataset_dir(wc.dataset))},
    script:
        "../../scripts/score_utterances.py"


rule score_speakers:
    input:
        manifest="results/{dataset}/manifest.parquet",
        trims=lambda wc: trim_tables(wc.dataset),
    output:
        "results/{dataset}/speaker_scores/{evaluator}.parquet",
    log:
        "logs/{dataset}/score_speakers/{evaluator}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        options=lambda wc: config["evaluator_options"].get(wc.evaluator, {}),
        variants=lambda wc: variants(wc.evaluator),
    script:
        "../../scripts/score_speakers.py"


rule score_reference:
    input:
        manifest="results/{dataset}/manifest.parquet",
        reference=lambda wc: reference_manifest(wc.dataset),
        trims=lambda wc: (
            trim_tables(wc.dataset, reference=True)
            if EVALUATOR_INFO[wc.evaluator].variant == "fa"
            else []
        ),
    output:
        "results/{dataset}/reference_scores/{evaluator}/{reftype}/{shard}.parquet",
    log:
        "logs/{dataset}/score_reference/{evaluator}/{reftype}/{shard}.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        options=lambda wc: config["evaluator_options"].get(wc.evaluator, {}),
    script:
        "../../scripts/score_reference.py"
