rule make_demo:
    output:
        truth=f"{DEMO_DIR}/truth.json",
        files=expand(
            "{root}/{subset}/{name}",
            root=str(DEMO_DIR),
            subset=DEMO_SUBSETS,
            name=DEMO_FILES,
        ),
    params:
        root=str(DEMO_DIR),
        settings={k: v for k, v in DEMO.items() if k != "path"},
    log:
        "logs/make_demo.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/pathbench.yaml"
    script:
        "../../scripts/make_demo.py"
