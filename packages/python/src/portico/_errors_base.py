"""The base of every error the SDK raises for a gateway problem (RFC 9457 problem+json)."""

import email.utils
import time
from typing import Any, Dict, List, Mapping, Optional


class PorticoError(Exception):
    """A gateway answer that is a problem: every problem-code exception derives from this.

    ``status``, ``code``, ``title`` and ``detail`` come from the problem; ``errors`` are the field
    errors of an ``invalid_input`` (``[{"path": ..., "message": ...}]``); ``authorization_link`` is a
    fresh link for the end user when an account is not active; ``retryable`` and ``retry_after``
    (seconds) say whether and when the same call may succeed.
    """

    #: The code this class stands for (set on each generated subclass).
    problem_code: Optional[str] = None

    def __init__(
        self,
        status: int,
        problem: Optional[Mapping[str, Any]] = None,
        retry_after_header: Optional[str] = None,
    ) -> None:
        problem = dict(problem or {})
        detail = problem.get("detail")
        self.detail: str = detail if isinstance(detail, str) else f"The gateway answered {status}."
        super().__init__(self.detail)
        self.status: int = status
        code = problem.get("code")
        self.code: str = code if isinstance(code, str) else (self.problem_code or "unexpected_response")
        title = problem.get("title")
        self.title: str = title if isinstance(title, str) else ""
        errors = problem.get("errors")
        self.errors: List[Dict[str, Any]] = list(errors) if isinstance(errors, list) else []
        request_id = problem.get("request_id")
        self.request_id: Optional[str] = request_id if isinstance(request_id, str) else None
        retryable = problem.get("retryable")
        if isinstance(retryable, bool):
            self.retryable: bool = retryable
        else:
            from ._errors_generated import PROBLEM_CODES

            self.retryable = bool(PROBLEM_CODES.get(self.code, (0, "", False))[2])
        ms = problem.get("retry_after_ms")
        if isinstance(ms, (int, float)) and not isinstance(ms, bool):
            self.retry_after: Optional[float] = ms / 1000
        else:
            self.retry_after = parse_retry_after(retry_after_header)
        link = problem.get("authorization_link")
        self.authorization_link: Optional[str] = None
        self.authorization_link_expires_at: Optional[str] = None
        if isinstance(link, dict) and isinstance(link.get("link"), str):
            self.authorization_link = link["link"]
            self.authorization_link_expires_at = link.get("expires_at")
        upstream = problem.get("upstream")
        self.upstream: Optional[Dict[str, Any]] = upstream if isinstance(upstream, dict) else None
        approval_id = problem.get("approval_id")
        self.approval_id: Optional[str] = approval_id if isinstance(approval_id, str) else None
        #: The problem body as received.
        self.problem: Dict[str, Any] = problem

    def __str__(self) -> str:
        lines = [f"{self.detail} ({self.code}, {self.status})"]
        lines.extend(f"- {e.get('path')}: {e.get('message')}" for e in self.errors)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, detail={self.detail!r})"


class PorticoConnectionError(Exception):
    """The network failed before the gateway answered (refused, reset, DNS, timeout)."""


def parse_retry_after(header: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not header:
        return None
    try:
        seconds = float(header)
        return seconds if seconds >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
