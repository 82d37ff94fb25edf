"""Anthropic text blocks with `citations` <-> canonical text blocks with v2 citations.

- `char_location`, `page_location`, `content_block_location` and `search_result_location`
  map field for field (Anthropic's nullable titles are absent when null).
- `web_search_result_location` is a canonical `url` citation. Its `encrypted_index` is
  opaque and Anthropic requires it back, so it is kept in provider_raw (`Replay.cites`)
  and a url citation goes back to Anthropic only with it: one from another provider (an
  OpenAI url annotation) has no Anthropic form and is dropped with the §7.3 WARN.
- A citation type added later has no canonical form: left out, named in the reader's WARN.
- A v3 file citation (another provider's file id) has no Anthropic form: dropped with the
  url citations' WARN (one per message).
- `file_id` (on document citations of replies) is not part of the request shape: not kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metis_schema.v3 import Citation, Message, TextBlock, UrlCitation
from pydantic import TypeAdapter, ValidationError

from ...errors import WireFormatError
from ...validation import pydantic_problems
from .._kit.cache_points import with_cache_point
from .._kit.importing import text_block
from .._kit.losses import Losses, block_at
from .facts import PROVIDER
from .provider_raw import Replay

_CITATION: TypeAdapter[Citation] = TypeAdapter(Citation)

_SAME = {
    "char_location": ("cited_text", "document_index", "start_char_index", "end_char_index"),
    "page_location": ("cited_text", "document_index", "start_page_number", "end_page_number"),
    "content_block_location": ("cited_text", "document_index", "start_block_index", "end_block_index"),
    "search_result_location": (
        "cited_text",
        "search_result_index",
        "source",
        "start_block_index",
        "end_block_index",
    ),
}
"""Citation type -> its fields that are the same on the wire and in the canonical form."""
_TITLE = {
    "char_location": "document_title",
    "page_location": "document_title",
    "content_block_location": "document_title",
    "search_result_location": "title",
}
"""Citation type -> its nullable title field (the same name on both sides)."""


def read_text(block: Mapping[str, Any], replay: Replay, key: str, path: str) -> TextBlock:
    """A declared wire text block (`wire.TextBlock`) at wire position `key` (JSON `path`)
    -> canonical, with its citations and breakpoint; opaque citation keys kept in
    `replay.cites`."""
    wire_citations = block.get("citations")
    if not wire_citations:
        return with_cache_point(text_block(block["text"]), block)
    citations: list[Citation] = []
    opaque: list[dict[str, Any]] = []
    for j, cite in enumerate(wire_citations):
        try:
            canonical, kept = _read(cite)
        except ValidationError as exc:  # a value the canonical citation refuses
            raise WireFormatError(
                f"citation cannot be read: {pydantic_problems(exc)[0]}",
                provider=PROVIDER,
                path=f"{path}.citations[{j}]",
            ) from None
        if canonical is None:
            replay.lost.append(f"citation {cite.get('type')!r}")
            continue
        citations.append(canonical)
        opaque.append(kept)
    if any(opaque):
        replay.cites[key] = opaque
    fields: dict[str, Any] = {"type": "text", "text": block["text"]}
    if citations:
        fields["citations"] = citations
    return with_cache_point(TextBlock.model_validate(fields), block)


def _read(cite: Mapping[str, Any]) -> tuple[Citation | None, dict[str, Any]]:
    kind = cite.get("type")
    if kind == "web_search_result_location":
        fields: dict[str, Any] = {"type": "url", "url": cite["url"], "cited_text": cite["cited_text"]}
        if cite.get("title") is not None:
            fields["title"] = cite["title"]
        return _CITATION.validate_python(fields), {
            "url": cite["url"],
            "encrypted_index": cite["encrypted_index"],
        }
    if not isinstance(kind, str) or kind not in _SAME:
        return None, {}
    fields = {"type": kind, **{name: cite[name] for name in _SAME[kind]}}
    title = cite.get(_TITLE[kind])
    if title is not None:
        fields[_TITLE[kind]] = title
    return _CITATION.validate_python(fields), {}


def write_citations(
    message: Message,
    index: int,
    citations: Sequence[Citation],
    kept: Sequence[Mapping[str, Any]],
    warned: set[str],
) -> list[dict[str, Any]]:
    """The wire citations of block `index` of `message` (`kept`: the opaque keys its reply
    kept, aligned with `citations`); what Anthropic has no form for is dropped with one WARN
    per message (`warned`: the ids of messages already warned about in this request)."""
    out: list[dict[str, Any]] = []
    dropped = 0
    kinds: set[str] = set()
    for j, cite in enumerate(citations):
        if cite.type not in _TITLE and not isinstance(cite, UrlCitation):
            dropped += 1  # a file citation: another provider's file id
            kinds.add(cite.type)
            continue
        if isinstance(cite, UrlCitation):
            opaque = kept[j] if j < len(kept) else {}
            if opaque.get("url") != cite.url or not isinstance(opaque.get("encrypted_index"), str):
                dropped += 1
                kinds.add(cite.type)
                continue
            out.append(
                {
                    "type": "web_search_result_location",
                    "cited_text": cite.cited_text or "",
                    "url": cite.url,
                    "title": cite.title,
                    "encrypted_index": opaque["encrypted_index"],
                }
            )
            continue
        fields = cite.model_dump(mode="json", exclude_none=True)
        title = _TITLE[cite.type]
        fields[title] = fields.get(title)  # required on the wire, nullable
        out.append(fields)
    if dropped and message.id not in warned:
        warned.add(message.id)
        Losses(PROVIDER, message.session_id).lost(
            message,
            "text/citation:" + ",".join(sorted(kinds)),
            "Anthropic takes back only its own web search citations (with their encrypted_index) "
            "and document citations",
            at=f"citations of {block_at(message, index)}",
            whole=True,
        )
    return out


__all__ = ["read_text", "write_citations"]
