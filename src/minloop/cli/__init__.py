"""The ``minloop`` command line (typer and rich live only here: ``import minloop`` needs neither)."""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """Entry point of the ``minloop`` command."""
    try:
        from .app import app
    except ImportError as exc:  # typer or rich missing
        from ..exceptions import MissingDependencyError

        hint = MissingDependencyError(f"the command line ({exc.name})", "pip install 'minloop[cli]'")
        raise SystemExit(str(hint)) from None
    from .view import one_line

    with one_line():  # a minloop error any command lets through: one line, no traceback
        app()
