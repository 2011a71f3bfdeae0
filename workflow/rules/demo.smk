# A checkpoint: validation lists the demo's audio as inputs, and it exists only once this ran.
checkpoint make_demo:
    output:
        truth=f"{DEMO_DIR}/truth.json",
        files=expand(
            "{root}/{subset}/{name}",
            root=str(DEMO_DIR),
            subset=DEMO_SUBSETS,
            name=DEMO_FILES,
        ),
    log:
        "logs/make_demo.log",
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["make_demo"],
    params:
        root=lambda wildcards, output: str(Path(output.truth).parent),
        settings={k: v for k, v in DEMO.items() if k != "path"},
        version=VERSION,
    script:
        "../../scripts/make_demo.py"
