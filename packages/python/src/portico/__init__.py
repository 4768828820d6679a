"""Portico's Python SDK: the gateway's operations, its tools for LLM APIs, the proxy and typed errors.

Standard library only. See the package README for a quick start.
"""

from ._http import PorticoResponse
from ._pages import Page, PageList
from ._resources import AccountWithLink, ToolResult
from .adapters import AnthropicTools, OpenAIChatTools, OpenAIResponsesTools, problem_text
from .aio import AsyncPortico
from .client import Portico
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors
from .webhooks import WebhookVerificationError, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "Portico",
    "AsyncPortico",
    "PorticoResponse",
    "Page",
    "PageList",
    "AccountWithLink",
    "ToolResult",
    "OpenAIChatTools",
    "OpenAIResponsesTools",
    "AnthropicTools",
    "problem_text",
    "verify_webhook",
    "WebhookVerificationError",
    *_errors,
]
