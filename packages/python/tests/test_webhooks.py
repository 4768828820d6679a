import base64
import json

import pytest

from portico import WebhookVerificationError, verify_webhook
from portico.webhooks import sign

# The example of the Standard Webhooks specification (its README and reference libraries' tests).
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = '{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(signature=SIGNATURE, msg_id=MSG_ID, timestamp=TIMESTAMP):
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def test_signs_the_standards_example_as_the_standard_does():
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == SIGNATURE


def test_accepts_the_standards_example_and_returns_the_body():
    assert verify_webhook(BODY.encode(), headers(), SECRET, now=TIMESTAMP) == json.loads(BODY)


def test_header_names_are_case_insensitive_and_any_listed_signature_matches():
    mixed = {"Webhook-Id": MSG_ID, "Webhook-Timestamp": str(TIMESTAMP), "Webhook-Signature": f"v1,bm90IGl0 {SIGNATURE}"}
    assert verify_webhook(BODY, mixed, SECRET, now=TIMESTAMP + 10)["test"] == 2432232314


@pytest.mark.parametrize(
    "change",
    [
        {"body": BODY + " "},
        {"headers": headers(msg_id="msg_other")},
        {"headers": headers(signature="v1,bm90IGl0")},
        {"headers": headers(signature="v2," + SIGNATURE[3:])},
        {"secret": "whsec_" + base64.b64encode(b"another key").decode()},
    ],
)
def test_refuses_any_change_to_body_id_signature_version_or_secret(change):
    with pytest.raises(WebhookVerificationError):
        verify_webhook(
            change.get("body", BODY), change.get("headers", headers()), change.get("secret", SECRET), now=TIMESTAMP
        )


def test_refuses_timestamps_outside_the_tolerance_both_ways():
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP + 301)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP - 301)
    assert verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP + 3600, tolerance=3601)


def test_refuses_a_missing_header():
    partial = headers()
    del partial["webhook-signature"]
    with pytest.raises(WebhookVerificationError, match="webhook-signature"):
        verify_webhook(BODY, partial, SECRET, now=TIMESTAMP)
