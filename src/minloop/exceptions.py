"""Exceptions raised to the developer.

Failures the *model* can fix (unknown tool, bad arguments, timeout, schema mismatch) never raise:
they go back into the conversation as JSON error envelopes (see ``minloop.execute``). The
exceptions below are for the *developer*: misuse, malformed input transcripts, broken
configuration, a model endpoint that cannot be reached.

    MinloopError
    ├── TranscriptError          a caller's message list breaks a rule (index + rule named)
    ├── ToolDefinitionError      a tool cannot be built from its function or options
    ├── ModelError               the model call failed (transport, HTTP status, bad payload)
    │   ├── ModelHTTPError       the endpoint answered with an HTTP error status
    │   └── ContextOverflowError the messages cannot fit the model's context window
    ├── ModelLoadError           a local model file is missing, corrupt or not a GGUF
    ├── NestedModelCallError     a model was called from inside a tool (tools never call an LLM)
    ├── ScriptError              a scripted test model was used differently from its script
    ├── MissingDependencyError   an optional extra is not installed (message has the hint)
    ├── MCPConnectionError       an MCP server cannot be started or reached (server and cause named)
    ├── StoreError               a run store or trace database cannot be opened, read or written
    │                            (store named, never with its password, and what to do)
    └── RunError                 a stored run cannot be resumed or changed as asked (run named)
        ├── RunNotFoundError     no run has this id in the store
        ├── RunConflictError     the run has ended, or another process holds it
        │   └── DecisionError    a decision for a call that is not waiting (or was decided), on
        │                        other arguments than the call's, or an edit that does not fit
        ├── RunMismatchError     the resuming loop lacks a tool the run used, or its schema changed
        └── RunCorruptError      a stored row cannot be read (damaged, or from a newer minloop)
"""

from __future__ import annotations

__all__ = [
    "ContextOverflowError",
    "DecisionError",
    "MCPConnectionError",
    "MinloopError",
    "MissingDependencyError",
    "ModelError",
    "ModelHTTPError",
    "ModelLoadError",
    "NestedModelCallError",
    "RunConflictError",
    "RunCorruptError",
    "RunError",
    "RunMismatchError",
    "RunNotFoundError",
    "ScriptError",
    "StoreError",
    "ToolDefinitionError",
    "TranscriptError",
]


class MinloopError(Exception):
    """Base class of every exception minloop raises on purpose."""


class TranscriptError(MinloopError, ValueError):
    """A message list given by the caller breaks a transcript rule.

    ``index`` is the position of the offending message (``None`` for the list as a whole) and
    ``rule`` a stable machine-readable name such as ``"tool_call_id_mismatch"``.
    """

    def __init__(self, index: int | None, rule: str, detail: str) -> None:
        self.index = index
        self.rule = rule
        self.detail = detail
        where = "transcript" if index is None else f"message {index}"
        super().__init__(f"{where}: {rule}: {detail}")


class ToolDefinitionError(MinloopError, TypeError):
    """A function or its options cannot become a tool."""


class ModelError(MinloopError):
    """A model call failed for a reason outside the conversation."""


class ModelHTTPError(ModelError):
    """The model endpoint answered with an HTTP error status; ``note`` says why it was not
    retried when the status alone does not."""

    def __init__(self, status_code: int, body: str, *, url: str = "", note: str = "") -> None:
        self.status_code = status_code
        self.body = body
        self.url = url
        where = f"HTTP {status_code} from {url or 'model endpoint'}"
        super().__init__(f"{where}: {note}; response: {body[:300]}" if note else f"{where}: {body[:300]}")


class ContextOverflowError(ModelError):
    """The messages cannot fit the model's context window, even after the context policy did
    what it could (or the model itself said so). Ends a run with status ``context_overflow``."""


class ModelLoadError(MinloopError):
    """A local model cannot be loaded: missing file, wrong checksum, not a GGUF."""


class NestedModelCallError(MinloopError, RuntimeError):
    """A model was called while a tool was executing (tools never call an LLM)."""


class ScriptError(MinloopError, AssertionError):
    """A scripted model was called more often than scripted, or its script was not used up."""


class MissingDependencyError(MinloopError, ImportError):
    """An optional dependency is missing; the message says what to install."""

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(f"{what} is not installed. Install it with: {hint}")


class MCPConnectionError(MinloopError, ConnectionError):
    """An MCP server cannot be started, reached or initialised; the message names it and why."""


class StoreError(MinloopError):
    """A run store or trace database cannot be opened, read or written: a damaged or foreign
    file, one that cannot be written, a full disk, a database server that cannot be reached, an
    address of an unknown kind. ``store`` names it (a PostgreSQL address without its password);
    the message says what went wrong and what to do. What the store held is left as it was."""

    def __init__(self, store: str, message: str) -> None:
        self.store = store
        super().__init__(f"{store}: {message}")


class RunError(MinloopError):
    """A stored run cannot be resumed or changed as asked; ``run_id`` names it. Raised before
    anything is changed: the stored run is as it was."""

    def __init__(self, run_id: str, message: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id}: {message}")


class RunNotFoundError(RunError, LookupError):
    """No run with this id is in the store."""


class RunConflictError(RunError):
    """The run cannot be taken now: it has ended, another process is driving it, or the
    decisions given are for calls that are not waiting for one."""


class DecisionError(RunConflictError):
    """A decision cannot be taken as given: its call is not waiting for one (or was decided
    already: the message says how, by whom and when), it names other arguments than the call's,
    or its edited arguments do not fit the tool."""


class RunMismatchError(RunError):
    """The resuming loop does not have the tools the run was started with (missing, renamed,
    or with another schema)."""


class RunCorruptError(RunError):
    """A stored row cannot be read: it is damaged, or was written by a newer minloop."""
