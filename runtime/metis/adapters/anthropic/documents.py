"""Anthropic `document` and `search_result` blocks <-> canonical v2 document and search_result.

Both sit in user turns and inside tool_result content.

- A document's source: `base64` (a PDF) is base64; `text` (plain text given inline) is
  base64 of its UTF-8 bytes with media type text/plain, written back as a `text` source;
  `url` is a URL (Anthropic fetches PDFs by URL); `file` is a file id hosted by
  Anthropic. A custom-content (`content`) source has no canonical kind: the block stays
  foreign (kept in provider_raw). `title`, `context` and `citations.enabled` map to the
  canonical fields.
- Out, Anthropic reads PDFs and plain text only: another media type or text that is not
  UTF-8 is dropped with the §7.3 WARN (the writer's `drop`); a file id of another provider
  never gets here (the writer's `media_admission.admit` drops it).
- A search result maps field for field; `citations.enabled` is `citations_enabled`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from metis_schema.v3 import DocumentBlock, MediaSourceKind, SearchResultBlock
from pydantic import BaseModel, ValidationError

from ...errors import WireFormatError
from ...validation import pydantic_problems
from ...workspace import workspace_file_base64
from .._kit.base import AdapterOptions
from .._kit.cache_points import with_cache_point
from .facts import PROVIDER

PDF = "application/pdf"
PLAIN = "text/plain"
FILE_MEDIA_TYPE = "application/octet-stream"
"""The media type of a Files API document: the wire does not say which it is."""


def read_document(block: Mapping[str, Any], path: str) -> DocumentBlock | None:
    """A declared wire document (`wire.DocumentBlock`) -> canonical; None for a source with
    no canonical kind (custom content)."""
    source = block["source"]
    kind = source.get("type")
    fields: dict[str, Any]
    if kind == "base64":
        fields = {"source": {"kind": "base64", "data": source["data"]}, "media_type": source["media_type"]}
    elif kind == "text":
        try:
            data = base64.b64encode(source["data"].encode()).decode("ascii")
        except UnicodeEncodeError:  # a lone surrogate escape in the JSON string
            raise WireFormatError(
                "document text is not valid Unicode", provider=PROVIDER, path=f"{path}.source.data"
            ) from None
        fields = {"source": {"kind": "base64", "data": data}, "media_type": source["media_type"]}
    elif kind == "url":
        fields = {"source": {"kind": "url", "data": source["url"]}, "media_type": PDF}
    elif kind == "file":
        fields = {
            "source": {"kind": "file_id", "data": source["file_id"], "provider": PROVIDER},
            "media_type": FILE_MEDIA_TYPE,
        }
    else:
        return None
    if block.get("title"):  # an empty title is no title (the canonical one is non-empty)
        fields["title"] = block["title"]
    if block.get("context") is not None:
        fields["context"] = block["context"]
    if (block.get("citations") or {}).get("enabled"):
        fields["citations_enabled"] = True
    return with_cache_point(valid_block(DocumentBlock, {"type": "document", **fields}, path), block)


def read_search_result(block: Mapping[str, Any], path: str) -> SearchResultBlock:
    """A declared wire search result (`wire.SearchResultBlock`) -> canonical."""
    fields: dict[str, Any] = {
        "type": "search_result",
        "source": block["source"],
        "title": block["title"],
        "content": [{"type": "text", "text": item["text"]} for item in block["content"]],
    }
    if (block.get("citations") or {}).get("enabled"):
        fields["citations_enabled"] = True
    return with_cache_point(valid_block(SearchResultBlock, fields, path), block)


_Block = TypeVar("_Block", bound=BaseModel)


def valid_block(model: type[_Block], fields: dict[str, Any], path: str) -> _Block:
    """`model` validated from `fields`; a value the schema refuses is a WireFormatError at `path`."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:  # e.g. an empty search result, a media type the schema refuses
        raise WireFormatError(
            f"{fields['type']} block cannot be read: {pydantic_problems(exc)[0]}",
            provider=PROVIDER,
            path=path,
        ) from None


def write_document(
    block: DocumentBlock, options: AdapterOptions, drop: Callable[[str], None]
) -> dict[str, Any] | None:
    """The wire document of a canonical one, or None (after `drop(reason)`) when Anthropic
    cannot read it."""
    source = _document_source(block, options, drop)
    if source is None:
        return None
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.title is not None:
        out["title"] = block.title
    if block.context is not None:
        out["context"] = block.context
    if block.citations_enabled:
        out["citations"] = {"enabled": True}
    return out


def _document_source(
    block: DocumentBlock, options: AdapterOptions, drop: Callable[[str], None]
) -> dict[str, Any] | None:
    kind, media = block.source.kind, block.media_type
    if kind == MediaSourceKind.file_id:  # Anthropic's own upload (`media_admission.admit` refused others)
        return {"type": "file", "file_id": block.source.data}
    if media not in (PDF, PLAIN):
        drop(f"Anthropic documents are {PDF} or {PLAIN}, not {media}")
        return None
    if kind == MediaSourceKind.url:
        if media == PDF:
            return {"type": "url", "url": block.source.data}
        drop("Anthropic fetches only PDFs by URL")
        return None
    data = (
        block.source.data
        if kind == MediaSourceKind.base64
        else workspace_file_base64(block.source.data, options.workspace, max_bytes=options.max_media_bytes)
    )
    if media == PDF:
        return {"type": "base64", "media_type": PDF, "data": data}
    try:
        text = base64.b64decode(data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        drop("a text/plain document whose bytes are not UTF-8 text")
        return None
    return {"type": "text", "media_type": PLAIN, "data": text}


def write_search_result(block: SearchResultBlock) -> dict[str, Any]:
    """The wire search result of a canonical one."""
    out: dict[str, Any] = {
        "type": "search_result",
        "source": block.source,
        "title": block.title,
        "content": [{"type": "text", "text": item.text} for item in block.content],
    }
    if block.citations_enabled:
        out["citations"] = {"enabled": True}
    return out


__all__ = ["read_document", "read_search_result", "valid_block", "write_document", "write_search_result"]
