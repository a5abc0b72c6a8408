"""Models and tools by name: what the command line and task files refer to.

``build_model("local")`` is the embedded model, ``build_model("gpt-4o-mini", base_url=...)`` a
Chat Completions endpoint, ``build_model("scripted", script=[...])`` a scripted model.
``build_tools(["builtins", "my_tools:search"])`` is the built-in tools plus your own, loaded
from ``module:attr``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from .exceptions import MinloopError
from .models.base import Model
from .tools import Tool, tool

__all__ = ["LOCAL_MODELS", "build_model", "build_tools", "load_tools"]

LOCAL_MODELS = {
    "local": "qwen2.5-coder-1.5b",
    "local-0.5b": "qwen2.5-coder-0.5b",
    "local-1.5b": "qwen2.5-coder-1.5b",
}


def build_model(
    spec: str,
    *,
    base_url: str | None = None,
    script: list[Any] | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    gguf: str | Path | None = None,
) -> Model:
    """A model from its CLI name: ``local`` (the 1.5B), ``local-0.5b``, ``local-1.5b``, ``scripted`` or an endpoint's model name."""
    if gguf is not None:
        from .models.local import LocalModel

        return LocalModel(path=gguf)
    if spec == "scripted":
        from .models.scripted import ScriptedModel

        if not isinstance(script, list):
            raise MinloopError("model 'scripted' needs a 'script': a list of assistant turns")
        return ScriptedModel(script)
    if spec in LOCAL_MODELS and base_url is None:
        from .models.local import LocalModel

        return LocalModel(LOCAL_MODELS[spec])
    from .models.openai import OpenAIModel

    return OpenAIModel(spec, base_url=base_url or "https://api.openai.com/v1", api_key_env=api_key_env)


def build_tools(spec: str | list[str] | None, root: str | Path = ".") -> list[Tool]:
    """Tools from a spec: ``"builtins"`` (over ``root``), ``"module:attr"``, or a list of them."""
    if spec is None:
        return []
    found: list[Tool] = []
    for item in [spec] if isinstance(spec, str) else spec:
        if item == "builtins":
            from .builtins import default_tools

            found.extend(default_tools(root))
        else:
            found.extend(load_tools(item))
    return found


def load_tools(spec: str) -> list[Tool]:
    """``module:attr`` where attr is a Tool, a function, or a list of them."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise MinloopError(f"tools {spec!r}: expected module:attr, e.g. my_tools:get_weather")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MinloopError(f"tools {spec!r}: cannot import {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    if not hasattr(module, attr):
        raise MinloopError(f"tools {spec!r}: module {module_name!r} has no attribute {attr!r}")
    value = getattr(module, attr)
    items = value if isinstance(value, list | tuple) else [value]
    if not all(isinstance(i, Tool) or callable(i) for i in items):
        raise MinloopError(f"tools {spec!r}: expected a tool, a function or a list of them")
    return [i if isinstance(i, Tool) else tool(i) for i in items]
