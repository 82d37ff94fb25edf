"""HAR files (HTTP Archive 1.2): `log.entries[]`, each a request and its response.

The request body is `request.postData.text`; the reply is `response.content.text`, base64
when `content.encoding` says so (a browser's binary or compressed capture). Every entry is
read; which are LLM calls is the URL's to say (`metis.endpoints.route`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import RecordingError
from ._bodies import base64_bytes, body_text
from ._interaction import Interaction, exchanges


def is_har(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(doc.get("log"), Mapping) and "entries" in doc["log"]


def _content(part: Mapping[str, Any], key: str, headers: Any, *, where: str) -> str | None:
    body = part.get(key)
    if not isinstance(body, Mapping):
        return None
    text = body.get("text")
    if not isinstance(text, str):
        return None
    raw: str | bytes = base64_bytes(text, where=where) if body.get("encoding") == "base64" else text
    return body_text(raw, headers, where=where)


def interactions(doc: Any, *, where: str) -> list[Interaction]:
    """Every entry of a HAR document (see the module docstring)."""
    entries = doc["log"]["entries"] if is_har(doc) else None
    if not isinstance(entries, list):
        raise RecordingError("not a HAR file: no `log.entries` list", path=where)
    what = "an entry must be an object"
    return exchanges(entries, where=where, what=what, bodies=_bodies, url="url", when="startedDateTime")


def _bodies(at: str, request: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str | None]:
    """A HAR entry's `request.postData` and `response.content` texts."""
    sent = _content(request, "postData", request.get("headers"), where=f"{at} request")
    got = _content(response, "content", response.get("headers"), where=f"{at} response")
    return sent, got


__all__ = ["interactions", "is_har"]
