"""The workflow's espeak-ng build (rule ``build_espeak``), run for real from a local server.

Why: with fetching on, every phonemising job reads the library this rule builds, so the rule
must download, verify, configure and make a real espeak-ng source archive, and a wrong archive
must stop it. The archive is Debian's espeak-ng 1.52.0 source (``.ci/run`` downloads it with
apt and sets ``PATHBENCH_ESPEAK_SOURCE``), served from 127.0.0.1 as GitHub serves the pinned
commit's: it builds the same way (autotools). Its phones must equal those of the
``espeakng-loader`` library, the same 1.52.0 release built by others; the system's library is
another release (Debian 12 has 1.51), whose phones differ for some texts. The build takes a few
minutes on one core (the tests marked slow); the digest and environment checks run without it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from pathbench_flow.stages import espeak
from pathbench_flow.testing import REPO
from pathbench_flow.testing.speech_fixtures import espeak_source
from pathbench_flow.testing.workflow_run import copy_workflow, snakemake

TEXTS = {
    "en": ["The quick brown fox jumps over the lazy dog", "Please call Stella"],
    "es": ["El perro come pan en la cocina"],
    "it": ["La ragazza arriva domani mattina", "Tre tigri contro tre tigri"],
    "nl": ["De kat zit op de mat", "Het regent in Amsterdam"],
}
CHILD = """
import json, sys
from pathbench_flow.neural import phonemes
texts = json.load(sys.stdin)
print(json.dumps({
    "version": phonemes.espeak_version(),
    "phones": {lang: [list(phonemes.phonemise(t, lang)) for t in ts] for lang, ts in texts.items()},
}))
"""


def phonemised(environment: dict[str, str]) -> dict:
    """The library version and the phones of :data:`TEXTS` in a fresh process (phonemizer loads
    one library per process) with ``environment`` added to a clean one."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PHONEMIZER_ESPEAK_")}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(TEXTS),
        capture_output=True,
        text=True,
        env=clean | {"PYTHONPATH": str(REPO)} | environment,
        check=True,
    )
    return json.loads(done.stdout)


def test_schema_default_is_the_pinned_commit() -> None:
    """The config's default URL is GitHub's archive of PathBench's commit, in full."""
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    fetch = schema["properties"]["fetch"]["properties"]
    assert fetch["espeak_ng"]["properties"]["url"]["default"] == espeak.SOURCE_URL
    assert espeak.COMMIT in espeak.SOURCE_URL and len(espeak.COMMIT) == 40


def test_digest_pinned_on_first_use_then_enforced(tmp_path) -> None:
    """No digest anywhere: recorded; the same one later: accepted; another: refused with both;
    a digest from the config wins over the lock."""
    lock, log = tmp_path / espeak.LOCK_NAME, io.StringIO()
    first, other = "a" * 64, "b" * 64
    espeak.verify("http://x/a.tar.gz", first, "", lock, log)
    assert json.loads(lock.read_text()) == {"http://x/a.tar.gz": first}
    espeak.verify("http://x/a.tar.gz", first, "", lock, log)
    with pytest.raises(espeak.DigestMismatch, match=f"{other}.*{first}"):
        espeak.verify("http://x/a.tar.gz", other, "", lock, log)
    espeak.verify("http://x/a.tar.gz", other, other, lock, log)
    assert json.loads(lock.read_text()) == {"http://x/a.tar.gz": first}


def test_another_library_in_the_environment_is_refused(tmp_path) -> None:
    """Fetching on and PHONEMIZER_ESPEAK_LIBRARY naming another library: stop, not guess."""
    build = tmp_path / "espeak-ng"
    own = espeak.phonemiser_environment(build)
    espeak.check_environment(build, own)
    espeak.check_environment(build, {})
    with pytest.raises(ValueError, match="PHONEMIZER_ESPEAK_LIBRARY=/usr/lib/libespeak-ng.so"):
        espeak.check_environment(build, {"PHONEMIZER_ESPEAK_LIBRARY": "/usr/lib/libespeak-ng.so"})


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Path, str]]:
    """Debian's espeak-ng source archive, served over HTTP on 127.0.0.1: (file, its URL)."""
    root = tmp_path_factory.mktemp("served")
    archive = root / "espeak-ng.tar.gz"
    shutil.copyfile(espeak_source(), archive)
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield archive, f"http://127.0.0.1:{server.server_port}/{archive.name}"
    server.shutdown()
    thread.join()


@pytest.fixture(scope="module")
def built(served, tmp_path_factory) -> tuple[Path, Path, str]:
    """The demo workflow with fetching on, asked for the build: (workdir, build, URL)."""
    _archive, url = served
    workdir = copy_workflow(tmp_path_factory.mktemp("espeak_build"))
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    config["fetch"] = {"enabled": True, "espeak_ng": {"url": url}}
    (workdir / "my.yaml").write_text(yaml.safe_dump(config))
    build = espeak.build_directory("resources/fetched")
    snakemake(workdir, str(build), "--cores", "1", "--configfile", "my.yaml")
    return workdir, workdir / build, url


@pytest.mark.slow
def test_build_phonemises_as_the_same_release(built):
    """The built library reports 1.52.0 and gives the bundled 1.52.0's phones for every text."""
    _workdir, build, _url = built
    mine = phonemised(espeak.phonemiser_environment(build))
    bundled = phonemised({})
    assert mine["version"] == bundled["version"] == "1.52.0"
    assert all(phones for found in mine["phones"].values() for phones in found)
    assert mine["phones"] == bundled["phones"]


@pytest.mark.slow
def test_first_download_pins_its_digest(built, served):
    """The lock beside the build records the archive's SHA-256 under its URL."""
    workdir, build, url = built
    archive, _url = served
    lock = json.loads((build.parent / espeak.LOCK_NAME).read_text())
    assert lock == {url: hashlib.sha256(archive.read_bytes()).hexdigest()}
    assert "pinned on first use" in (workdir / "logs" / "build_espeak.log").read_text()


@pytest.mark.slow
def test_another_archive_is_refused_with_both_digests(built, served):
    """Run last: an archive that differs from the pinned one stops the rebuild, naming both
    digests, and leaves no build behind."""
    workdir, build, _url = built
    archive, _url = served
    pinned = hashlib.sha256(archive.read_bytes()).hexdigest()
    with archive.open("ab") as out:
        out.write(b"\0" * 512)  # still a valid tar.gz? no matter: the digest is checked first
    changed = hashlib.sha256(archive.read_bytes()).hexdigest()
    target = str(build.relative_to(workdir))
    run = snakemake(
        workdir,
        *(target, "--cores", "1", "--forcerun", "build_espeak", "--configfile", "my.yaml"),
        check=False,
    )
    assert run.returncode != 0
    log = (workdir / "logs" / "build_espeak.log").read_text()
    assert pinned in log and changed in log
    assert not build.exists()
