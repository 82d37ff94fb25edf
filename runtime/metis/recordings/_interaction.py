"""One recorded exchange, whatever container it came in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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


def exchanges(items: list[Any], *, where: str, what: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each entry of a recorder's list of exchanges (HAR entries, VCR interactions) with its
    place (`a.yaml#3`); an entry that is not an object is a RecordingError there, naming it
    as its recorder does (`what`: "an entry must be an object")."""
    for i, item in enumerate(items):
        at = f"{where}#{i + 1}"
        if not isinstance(item, Mapping):
            raise RecordingError(what, path=at)
        yield at, item


def recorded(
    at: str,
    request: Mapping[str, Any],
    response: Mapping[str, Any],
    *,
    sent: str | None,
    got: str | None,
    url: Any,
    when: Any,
) -> Interaction:
    """The Interaction of one exchange a recorder keeps as a request and a response object
    (HAR, VCR): their bodies' texts (`sent`, `got`), the request's URL where it is text,
    its method, the response's status, and when it happened (`when`, as the recorder says)."""
    return Interaction(
        where=at,
        request=payload(sent),
        response=payload(got),
        status=status_code(response.get("status")),
        url=url if isinstance(url, str) else None,
        method=str(request.get("method") or "").upper() or None,
        recorded_at=moment(when),
    )


__all__ = ["Interaction", "exchanges", "moment", "part", "payload", "recorded", "status_code"]
