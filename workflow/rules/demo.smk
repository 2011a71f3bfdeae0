# The embedded demo corpus: synthesised by the checkpoint below when missing. Everything the
# workflow knows about it lives here; inputs.smk and shard_plan.smk ask only the two generic
# questions at the end (which Kaldi files a generated directory gets, and how many utterances).
from pathbench_flow.demo.corpus import expected_utterances

DEMO = config["demo"]
DEMO_DIR = Path(DEMO["path"])
DEMO_SUBSETS = ("pathological", "control")
DEMO_FILES = (
    "wav.scp",
    "text",
    "utt2spk",
    "spk2score",
    "spk2gender",
    "spk2age",
    "utt2group",
    "language",
)


def is_generated(path):
    """Whether a dataset directory is one this workflow writes (a subset of the demo
    directory). Any other path, a misspelt subset under the demo directory too, is the user's
    and is checked as such, so a typo is reported by its path."""
    return Path(path) in {DEMO_DIR / subset for subset in DEMO_SUBSETS}


def generated_kaldi_files(directory):
    """The Kaldi files the demo checkpoint writes into ``directory``, once it has run; None
    for a directory the workflow does not generate."""
    if not is_generated(directory):
        return None
    checkpoints.make_demo.get()
    return [str(directory / name) for name in DEMO_FILES]


def generated_utterance_count(directory):
    """Utterances of a demo subset, known from the config before the corpus exists."""
    counts = expected_utterances(
        DEMO["n_pathological"], DEMO["n_control"], DEMO["n_utterances"]
    )
    return counts[DEMO_SUBSETS.index(directory.name)]


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
