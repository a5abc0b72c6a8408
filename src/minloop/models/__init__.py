"""Models: the ``Model`` protocol and its implementations.

``OpenAIModel`` speaks Chat Completions over httpx; ``OpenAIClientModel`` wraps a user's own
``openai`` client; ``LocalModel`` runs an embedded GGUF (optional extra, imported lazily).
"""

from .base import Model, ModelRequest, ModelResponse, ToolChoice, Usage

__all__ = ["Model", "ModelRequest", "ModelResponse", "ToolChoice", "Usage"]
