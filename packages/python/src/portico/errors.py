"""Every exception the SDK raises: one class per gateway problem code, generated from its list."""

from typing import Any, Mapping, Optional, Type

from ._errors_base import PorticoConnectionError, PorticoError, parse_retry_after
from ._errors_generated import *  # noqa: F401,F403
from ._errors_generated import ERROR_CLASSES, PROBLEM_CODES
from ._errors_generated import __all__ as _generated


def problem_error(
    status: int, problem: Mapping[str, Any], retry_after_header: Optional[str] = None
) -> PorticoError:
    """The exception for a problem answer: the class of its code, or PorticoError for a code this SDK predates."""
    code = problem.get("code")
    cls: Type[PorticoError] = ERROR_CLASSES.get(code, PorticoError) if isinstance(code, str) else PorticoError
    return cls(status, problem, retry_after_header)


__all__ = [
    "PorticoError",
    "PorticoConnectionError",
    "problem_error",
    "parse_retry_after",
    "ERROR_CLASSES",
    "PROBLEM_CODES",
    *_generated,
]
