"""Standard Webhooks (https://www.standardwebhooks.com) signatures, as Portico signs its deliveries.

The signed content is ``{webhook-id}.{webhook-timestamp}.{body}``; the ``webhook-signature`` header
holds space-separated ``v1,<base64 HMAC-SHA256>`` entries (several while a secret rotates); the
secret is ``whsec_`` followed by the base64 key.
"""

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

DEFAULT_TOLERANCE = 5 * 60


class WebhookVerificationError(Exception):
    """The delivery is not signed with the secret, or its timestamp is outside the tolerance."""


def _key(secret: str) -> bytes:
    raw = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(raw, validate=True)
    except ValueError as error:
        raise ValueError("The webhook secret must be whsec_ followed by base64.") from error


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"The {name} header is missing.")


def sign(secret: str, msg_id: str, timestamp: int, body: Union[bytes, str]) -> str:
    """The ``v1,<signature>`` entry for a payload (to test a receiver)."""
    payload = body.encode() if isinstance(body, str) else body
    content = f"{msg_id}.{timestamp}.".encode() + payload
    digest = hmac.new(_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify_webhook(
    body: Union[bytes, str],
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> Any:
    """Checks a delivery and returns its parsed JSON body; raises WebhookVerificationError.

    ``body`` must be the raw request body, unparsed. ``tolerance`` is how many seconds the
    timestamp may differ from now (replays of old deliveries are refused).
    """
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError("The webhook-timestamp header is not a number of seconds.") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("The webhook-timestamp is outside the tolerance window.")
    expected = sign(secret, msg_id, timestamp, body).split(",", 1)[1]
    for entry in signatures.split(" "):
        version, _, signature = entry.partition(",")
        if version == "v1" and hmac.compare_digest(signature.encode(), expected.encode()):
            payload = body.decode() if isinstance(body, bytes) else body
            return json.loads(payload)
    raise WebhookVerificationError("No webhook-signature matches the secret.")
