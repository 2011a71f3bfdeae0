# PathBench's espeak-ng (pathbench_flow/stages/espeak.py): with fetching on, built once by a local
# rule and used by every job that phonemises; with it off, phonemizer's library as before
# (pathbench_flow/neural/phonemes.py: the bundled 1.52.0 unless PHONEMIZER_ESPEAK_LIBRARY says).
from pathbench_flow.stages import espeak

ESPEAK_BUILD = espeak.build_directory(config["fetch"]["directory"])

# Every job inherits this process's environment (and a cluster job's Snakemake parses this file
# again), so the phonemes of every job come from the build.
if config["fetch"]["enabled"]:
    espeak.check_environment(ESPEAK_BUILD, os.environ)
    os.environ.update(espeak.phonemiser_environment(ESPEAK_BUILD))


# Local: on a cluster it runs on the submit host, which has internet; compute jobs only read it.
rule build_espeak:
    output:
        directory(str(ESPEAK_BUILD)),
    log:
        "logs/build_espeak.log",
    localrule: True
    conda:
        "../envs/pathbench.yaml"
    threads: 1
    resources:
        **RESOURCES["build_espeak"],
    params:
        url=config["fetch"]["espeak_ng"]["url"],
        sha256=config["fetch"]["espeak_ng"]["sha256"],
        lock=str(ESPEAK_BUILD.parent / espeak.LOCK_NAME),
        version=VERSION,
    script:
        "../../scripts/build_espeak.py"
