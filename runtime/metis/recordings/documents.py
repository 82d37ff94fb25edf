"""JSON documents people keep of an exchange: a bare request body, or a request with its reply.

A document with `request` and `response` is an exchange whatever else it holds (a
`comment`, an `id`, timings, the `url`): extra keys are kept out of the way, never taken
for a request field. Either side may be wrapped the way HTTP loggers write them:
`{"url", "headers", "body"}` for the request, `{"status", "headers", "body" | "json" |
"text" | "events"}` for the reply. A document without both keys is a request body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._interaction import Interaction, moment, payload, status_code

_WRAPPED_BODY = ("body", "json", "text", "events", "chunks", "content")
"""Keys under which an HTTP logger keeps a body (tried in this order)."""
_REPLY_MARKS = frozenset(
    {"choices", "candidates", "message", "output", "model", "modelVersion", "error", "type"}
)
"""Keys only a reply body (or an error body) has at its top level: never a wrapper."""
_REQUEST_MARKS = frozenset({"messages", "contents", "input", "model"})


def is_exchange(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "request" in doc and "response" in doc


def _unwrap(value: Any, marks: frozenset[str]) -> tuple[Any, Mapping[str, Any]]:
    """(the body, the wrapper's other fields) of one side of an exchange."""
    if not isinstance(value, Mapping) or marks & set(value):
        return value, {}
    for key in _WRAPPED_BODY:
        if key in value:
            body = value[key]
            if isinstance(body, Mapping) and isinstance(body.get("string"), str):  # {string: ...}
                body = body["string"]
            return (payload(body) if isinstance(body, str) else body), value
    return value, {}


def interaction(doc: Mapping[str, Any], *, where: str) -> Interaction:
    """One document as an Interaction (see the module docstring)."""
    if not is_exchange(doc):
        return Interaction(where=where, request=doc, url=_url(doc))
    request, sent = _unwrap(doc["request"], _REQUEST_MARKS)
    response, got = _unwrap(doc["response"], _REPLY_MARKS)
    status = next(
        (code for code in (status_code(got.get(k)) for k in ("status", "status_code")) if code is not None),
        status_code(doc.get("status", doc.get("status_code"))),
    )
    return Interaction(
        where=where,
        request=request,
        response=response,
        status=status,
        url=_url(sent) or _url(doc),
        method=str(sent.get("method") or "").upper() or None,
        recorded_at=moment(doc.get("recorded_at")),
    )


def _url(part: Mapping[str, Any]) -> str | None:
    for key in ("url", "uri", "endpoint"):
        if isinstance(part.get(key), str) and "://" in part[key]:
            return str(part[key])
    return None


__all__ = ["interaction", "is_exchange"]
