"""Plays the end user in a browser with the standard library: opens an authorization link, answers
the sandbox provider's consent page and follows back to the gateway, as a person does."""

import html
import http.client
import re
import urllib.parse
from typing import Dict, Optional, Tuple


def fetch(url: str, method: str = "GET", body: Optional[str] = None, headers: Optional[Dict[str, str]] = None) -> Tuple[int, http.client.HTTPMessage, str]:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    sent = dict(headers or {})
    if body is not None:
        sent.setdefault("content-type", "application/x-www-form-urlencoded")
    conn.request(method, target, body=body, headers=sent)
    res = conn.getresponse()
    text = res.read().decode("utf-8", "replace")
    conn.close()
    return res.status, res.msg, text


def _attr(tag: str, name: str) -> Optional[str]:
    m = re.search(rf'\b{name}="([^"]*)"', tag)
    return html.unescape(m.group(1)) if m else None


def authorize(link: str, decision: str = "allow") -> int:
    """Returns the status of the gateway's answer at the callback (200 once connected)."""
    status, _, page = fetch(link)
    assert status == 200, f"the link's landing page answered {status}"
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    assert action, "the landing page has no form"
    status, headers, _ = fetch(urllib.parse.urljoin(link, html.unescape(action.group(1))), "POST", "")
    assert status == 303, f"opening the link answered {status}"
    authorize_url = urllib.parse.urljoin(link, headers["location"])
    cookie = "; ".join(c.split(";")[0] for c in headers.get_all("set-cookie") or [])
    status, headers, page = fetch(authorize_url)
    if 300 <= status < 400:
        callback = urllib.parse.urljoin(authorize_url, headers["location"])
    else:
        assert status == 200, f"the consent page answered {status}"
        form = re.search(r"<form\b[^>]*>", page, re.I)
        assert form, "no form on the consent page"
        fields = []
        selected = None
        for tag in re.findall(r"<input\b[^>]*>", page, re.I):
            name = _attr(tag, "name")
            if not name:
                continue
            if _attr(tag, "type") == "radio":
                if name == "user_id" and re.search(r"\schecked\b", tag):
                    selected = _attr(tag, "value")
                continue
            fields.append((name, _attr(tag, "value") or ""))
        if selected:
            fields = [f for f in fields if f[0] != "user_id"] + [("user_id", selected)]
        fields = [f for f in fields if f[0] != "decision"]
        fields.append(("decision", decision))
        target = urllib.parse.urljoin(authorize_url, _attr(form.group(0), "action") or "")
        status, headers, text = fetch(target, "POST", urllib.parse.urlencode(fields))
        assert headers.get("location"), f"consent answered {status}: {text[:300]}"
        callback = urllib.parse.urljoin(target, headers["location"])
    status, _, _ = fetch(callback, headers={"cookie": cookie})
    return status
