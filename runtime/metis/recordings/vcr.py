"""VCR cassettes: vcrpy's YAML (or JSON) `interactions`, and Ruby VCR's `http_interactions`.

vcrpy keeps `request: {method, uri, body, headers}` with the body a string, bytes
(`!!binary`) or null, and `response: {status: {code, message}, headers, body: {string}}`.
Ruby VCR (and the recorders that copy it) keeps both bodies as `{encoding, string}` or
`{base64_string}`. Headers are a dict of lists or of strings. Every interaction is read;
which ones are LLM calls is the URL's to say (`metis.endpoints.route`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import RecordingError
from ._bodies import base64_bytes, body_text
from ._interaction import Interaction, exchanges


def load_yaml(text: str, *, where: str) -> Any:
    """The YAML document (safe loading: no Python objects are built from tags)."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - the extra is installed with metis[recordings]
        raise RecordingError(
            "reading YAML cassettes needs PyYAML",
            path=where,
            hint="pip install 'metis-canonical[recordings]'",
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RecordingError(f"not a YAML cassette: {str(exc).splitlines()[0]}", path=where) from None


def _raw_body(body: Any, *, where: str) -> str | bytes | None:
    if isinstance(body, Mapping):  # {string: ...} (vcrpy response), {encoding, string} / {base64_string}
        if isinstance(body.get("base64_string"), str):
            return base64_bytes(body["base64_string"], where=where)
        body = body.get("string")
    if body is None or isinstance(body, str | bytes):
        return body
    raise RecordingError(f"body is a {type(body).__name__}, not text or bytes", path=where)


def is_cassette(doc: Any) -> bool:
    return isinstance(doc, Mapping) and isinstance(
        doc.get("interactions", doc.get("http_interactions")), list
    )


def interactions(doc: Any, *, where: str) -> list[Interaction]:
    """Every interaction of a cassette document (see the module docstring)."""
    if not is_cassette(doc):
        raise RecordingError("not a VCR cassette: no `interactions` list", path=where)
    items = doc.get("interactions", doc.get("http_interactions"))
    what = "an interaction must be a mapping"
    return exchanges(items, where=where, what=what, bodies=_bodies, url="uri", when="recorded_at")


def _bodies(at: str, request: dict[str, Any], response: dict[str, Any]) -> tuple[str | None, str | None]:
    """An interaction's request and response body texts (see `_raw_body` for their forms)."""
    sent = body_text(_raw_body(request.get("body"), where=at), request.get("headers"), where=f"{at} request")
    got = body_text(
        _raw_body(response.get("body"), where=at), response.get("headers"), where=f"{at} response"
    )
    return sent, got


__all__ = ["interactions", "is_cassette", "load_yaml"]
