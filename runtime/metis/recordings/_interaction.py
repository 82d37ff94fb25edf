"""One recorded exchange, whatever container it came in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import _json
from .._times import moment
from ..errors import RecordingError


@dataclass(frozen=True)
class Interaction:
    """A request and its reply as recorded (bodies parsed where they are JSON).

    `request` is the request body (a JSON object, or None when the recorder kept none).
    `response` is what came back: a JSON object (a reply, or an error body), a list (the
    events of a stream, parsed), text (a stream as sent: SSE, NDJSON, a JSON array) or
    None. `status` and `url` are there when the container records them; the URL tells
    the wire format and, for Gemini, the model (`metis.endpoints.route`).
    """

    where: str
    """The file, and the interaction's place in it when it holds several (`a.yaml#3`)."""
    request: Any
    response: Any = None
    status: int | None = None
    url: str | None = None
    method: str | None = None
    recorded_at: datetime | None = None
    """When the exchange happened, where the container says (HAR `startedDateTime`, Ruby
    VCR `recorded_at`, an exchange document's `recorded_at`): a reply is priced at its time."""


def part(doc: Any, key: str) -> dict[str, Any]:
    """`doc[key]` when it is an object, else {} (a recorder that left it out)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def payload(text: str | None) -> Any:
    """A body's text as JSON when it is one JSON value, else the text itself (a stream)."""
    if text is None or not text.strip():
        return None
    try:
        return _json.loads(text)
    except ValueError:
        return text


def status_code(value: Any) -> int | None:
    """`200`, `"200"` or `{"code": 200, "message": "OK"}` -> 200; anything else None."""
    if isinstance(value, dict):
        value = value.get("code")
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


Bodies = Callable[[str, dict[str, Any], dict[str, Any]], tuple[str | None, str | None]]
"""A recorder's way to its bodies' texts: (place, request object, response object) -> (sent, got)."""


def exchanges(
    items: list[Any], *, where: str, what: str, bodies: Bodies, url: str, when: str
) -> list[Interaction]:
    """The Interactions of a recorder's list of exchanges, each an object holding a `request`
    and a `response` object (HAR entries, VCR interactions): the bodies as `bodies` reads
    them, the request's URL at its key `url` where it is text, its method, the response's
    status, and when it happened at the entry's key `when`. An entry that is not an object
    is a RecordingError at its place (`a.yaml#3`), worded as its recorder names it (`what`)."""
    out = []
    for i, item in enumerate(items):
        at = f"{where}#{i + 1}"
        if not isinstance(item, Mapping):
            raise RecordingError(what, path=at)
        request = part(item, "request")
        response = part(item, "response")
        sent, got = bodies(at, request, response)
        address = request.get(url)
        out.append(
            Interaction(
                where=at,
                request=payload(sent),
                response=payload(got),
                status=status_code(response.get("status")),
                url=address if isinstance(address, str) else None,
                method=str(request.get("method") or "").upper() or None,
                recorded_at=moment(item.get(when)),
            )
        )
    return out


__all__ = ["Bodies", "Interaction", "exchanges", "moment", "part", "payload", "status_code"]
