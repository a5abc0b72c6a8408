"""The setup builds the embedded runtime for the CPU when the prebuilt wheel would leave its
vector units idle (scripts/build_runtime.sh), without AMX, and later setups leave it alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import xllamacpp

from minloop.models.local.gguf import cache_dir

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build_runtime.sh"


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def features() -> str:
    return str(xllamacpp.get_system_info())


def test_the_runtime_uses_the_cpus_avx512_but_not_amx() -> None:
    flags = cpu_flags()
    broken = list((cache_dir() / "runtime").glob("*/broken"))  # a build that could not run the model
    if "avx512f" in flags and not broken:
        assert "AVX512 = 1" in features()
        assert ("AVX512_VNNI = 1" in features()) == ("avx512_vnni" in flags)
        assert "AMX" not in features()  # its kernels crashed loading the model on a Xeon with AMX
    else:  # the prebuilt wheel, built for AVX2, is kept
        assert "AVX512 = 1" not in features()


def test_a_later_setup_builds_and_installs_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "MINLOOP_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(SCRIPT), sys.executable], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == done.stderr == ""
    assert list(tmp_path.iterdir()) == []  # nothing built, nothing kept


def test_minloop_native_0_keeps_the_prebuilt_wheel(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho called >> "$0.log"\nexit 1\n')
    fake.chmod(0o755)
    env = {**os.environ, "MINLOOP_NATIVE": "0", "MINLOOP_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(["bash", str(SCRIPT), str(fake)], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (tmp_path / "python.log").exists()  # not even asked what it runs
