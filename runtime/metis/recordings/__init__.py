"""Recorded HTTP traffic, as people keep it, read as exchanges (`Interaction`s).

One reader per container, each small: `vcr` (VCR cassettes, YAML or JSON), `har` (HTTP
Archive files), `documents` (a JSON request body, or a `{request, response}` exchange,
one per file or one per line). `_bodies` turns a recorded body back into the text the
server sent (base64, gzip, deflate, chunked framing), `_streams` a recorded stream into
the framing its adapter's decoder reads. Which session an exchange belongs to is
`threads`' to say; which adapter reads it, `metis.cli._exchange`'s (`metis import`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import _json
from ..errors import RecordingError
from . import documents, har, vcr
from ._interaction import Interaction

RECORDING_SUFFIXES = (".json", ".jsonl", ".ndjson", ".yaml", ".yml", ".har")
"""File names a folder given to `metis import` is searched for."""
_YAML_CASSETTE = re.compile(r"^(?:http_)?interactions:", re.MULTILINE)


def _documents(text: str, *, where: str) -> list[tuple[str, Any]]:
    """(where, document) for one JSON document or for JSON lines; None when neither."""
    try:
        return [(where, _json.loads(text))]
    except json.JSONDecodeError as whole:
        docs: list[tuple[str, Any]] = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append((f"{where}:{number}", _json.loads(line)))
            except json.JSONDecodeError:
                raise RecordingError(
                    f"neither JSON nor JSON lines: {whole.msg} (line {whole.lineno});"
                    f" line {number} fails too",
                    path=where,
                ) from None
        if not docs:
            raise RecordingError("empty", path=where) from None
        return docs


def _read_doc(doc: Any, *, where: str) -> list[Interaction]:
    if har.is_har(doc):
        return har.interactions(doc, where=where)
    if vcr.is_cassette(doc):
        return vcr.interactions(doc, where=where)
    if isinstance(doc, dict):
        return [documents.interaction(doc, where=where)]
    if isinstance(doc, list) and doc and all(isinstance(d, dict) for d in doc):
        return [i for n, d in enumerate(doc) for i in _read_doc(d, where=f"{where}[{n}]")]
    raise RecordingError(
        f"holds a JSON {type(doc).__name__}, not a request body, an exchange, a cassette or a HAR file",
        path=where,
    )


def read_recording(text: str, *, where: str) -> list[Interaction]:
    """Every exchange a file's text holds, whichever container it is (module docstring)."""
    if where.lower().endswith((".yaml", ".yml")) or (
        _YAML_CASSETTE.search(text) and not text.lstrip().startswith(("{", "["))
    ):
        return vcr.interactions(vcr.load_yaml(text, where=where), where=where)
    return [i for at, doc in _documents(text, where=where) for i in _read_doc(doc, where=at)]


__all__ = ["RECORDING_SUFFIXES", "Interaction", "read_recording"]
