"""A Chat Completions reply -> one canonical ASSISTANT message (and the assistant-message
reader the importer shares for request history).

- `arguments`: the canonical serialization is compact JSON. When the provider's own string
  differs (whitespace, key escapes) or is blank it is kept in
  `provider_raw["arguments"][<canonical id>]`; text that does not parse lives in
  `provider_raw["unparsed_arguments"]` (as the assembler does). Either is replayed, to the
  same provider only, while it still parses to the block's input.
- A refusal (`message.refusal`, or a `refusal` part) becomes a TextBlock and stop reason
  `refusal`; it replays as ordinary assistant text.
- A `function_call` beside `tool_calls` duplicates the first call (llama-cpp-python sends
  both) and is ignored; alone it has no tool call id to link a result to: WireFormatError.
- Assistant parts, tool calls and `reasoning_details` items with no canonical form are kept
  in provider_raw (`unsupported_tool_calls`, the details array) with a WARN.
- `annotations` of type `url_citation` become the `citations` of the message's text block
  (UrlCitation: url, title, cited `content` as `cited_text`, start/end index into the
  text); other annotation types are kept in provider_raw["annotations"] with a WARN. A
  reply with citations and no text gets an empty text block to hold them.
- Plain reasoning text (a dialect's `plain_reasoning_keys`) records the key it came under
  in provider_raw["reasoning_key"], which `to_wire` replays it under.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from metis_schema.v3 import ContentBlock, Message, RedactedThinkingBlock, TextBlock
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant, parse_tool_arguments
from ...errors import WireFormatError
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._kit.facts import ProviderFacts
from .._kit.importing import text_block, thinking_block, tool_use_block, validate_text
from .._kit.losses import Losses
from .._kit.reader import read
from .facts import stop_reason
from .wire import (
    Annotation,
    AssistantFields,
    AssistantPart,
    Fields,
    ReasoningDetail,
    Response,
    ThinkingPart,
    ToolCall,
    kept_arguments,
)

DETAIL_TEXT_KEYS = {"reasoning.text": "text", "reasoning.summary": "summary"}
"""reasoning_details item type -> the key holding its text."""


def response_raw(adapter: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """provider_raw of a reply: what replay or audit needs, None values left out."""
    return {"adapter": adapter, **{k: v for k, v in meta.items() if v is not None and v != {}}}


def not_canonical(exc: ValidationError, *, provider: str, path: str) -> WireFormatError:
    """The WireFormatError for a canonical model's refusal of a value read from the wire."""
    return WireFormatError(
        f"cannot be read as canonical: {pydantic_problems(exc)[0]}", provider=provider, path=path
    )


def read_response(name: str, facts: ProviderFacts, body: Any, context: RequestContext) -> Message:
    """`choices[0].message` of a reply body -> one COMPLETE canonical ASSISTANT message."""
    if isinstance(body, dict) and body.get("error"):
        raise facts.parse_error(body)
    reply = read(Response, body, provider=name, what="reply")
    choice = reply["choices"][0]
    assistant = read_assistant(name, facts, choice["message"], path="choices[0].message", context=context)
    finish = choice.get("finish_reason")
    usage = reply.get("usage")
    raw = response_raw(
        name,
        {
            "id": reply.get("id"),
            "model": reply.get("model"),
            "finish_reason": finish,
            "native_finish_reason": choice.get("native_finish_reason"),
            "system_fingerprint": reply.get("system_fingerprint"),
            "provider": reply.get("provider"),
            **assistant.raw(),
        },
    )
    return finish_assistant(
        context,
        provider=name,
        content=assistant.blocks or [TextBlock(type="text", text="")],
        counts=normalize_usage(name, usage, read_as=dict),  # taken in with the reply (`Response`)
        stop_reason=stop_reason(facts, finish, refused=assistant.refused),
        provider_raw=raw,
    )


@dataclass(slots=True)
class AssistantRead:
    """Blocks of one wire assistant message, plus what its provider_raw must keep."""

    blocks: list[ContentBlock] = field(default_factory=list)
    arguments: dict[str, str] = field(default_factory=dict)
    unparsed: dict[str, str] = field(default_factory=dict)
    details: list[ReasoningDetail] | None = None
    reasoning_key: str | None = None
    refused: bool = False
    unsupported: list[Any] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    """Annotations with no canonical form (not `url_citation`), kept raw."""

    def keeps(self) -> bool:
        """Whether `raw` holds anything (most turns keep nothing: no provider_raw is built)."""
        return bool(
            self.arguments
            or self.unparsed
            or self.details
            or self.reasoning_key
            or self.unsupported
            or self.annotations
        )

    def raw(self) -> dict[str, Any]:
        """What provider_raw must keep (None: nothing), for `response_raw`."""
        return {
            "arguments": self.arguments or None,
            "unparsed_arguments": self.unparsed or None,
            "reasoning_details": self.details,
            "reasoning_key": self.reasoning_key,
            "unsupported_tool_calls": self.unsupported or None,
            "annotations": self.annotations or None,
        }


def read_assistant(
    name: str,
    facts: ProviderFacts,
    message: AssistantFields,
    *,
    path: str,
    context: RequestContext,
    citations: bool = True,
) -> AssistantRead:
    """A checked wire assistant message (reply or request history) -> canonical blocks.

    `citations=False` leaves `annotations` unread (the importer: no dialect replays them,
    so it lists them as dropped instead).
    """
    out = AssistantRead()
    calls = message.get("tool_calls")
    if message.get("function_call") and not calls:
        raise WireFormatError(
            "the deprecated function_call field has no tool call id to link its result to",
            provider=name,
            path=f"{path}.function_call",
            hint="use tool_calls",
        )
    _reasoning(name, facts, message, path, out=out, context=context)
    first_text = len(out.blocks)
    content = message.get("content")
    if isinstance(content, str):
        if content:
            out.blocks.append(text_block(content))
    elif content is not None:
        for j, part in enumerate(content):
            _part(name, facts, part, f"{path}.content[{j}]", out=out, context=context)
    annotations = message.get("annotations") if citations else None
    if annotations:
        cites = url_citations(name, annotations, f"{path}.annotations", context, out.annotations)
        if cites:
            _cite(out.blocks, first_text, cites, name, f"{path}.annotations")
    refusal = message.get("refusal")
    if refusal:
        out.blocks.append(text_block(refusal))
        out.refused = True
    for k, call in enumerate(calls or ()):
        _tool_call(name, call, f"{path}.tool_calls[{k}]", context, out)
    return out


def thinking_text(name: str, part: AssistantPart, path: str) -> tuple[str, str | None]:
    """The text of a Mistral `thinking` part (read as `ThinkingPart`): its text chunks,
    joined; and its `signature` (None when it has none)."""
    checked = read(ThinkingPart, part, provider=name, path=path, what="thinking part")
    text = "".join(c.get("text", "") for c in checked["thinking"] if c.get("type", "text") == "text")
    return text, checked.get("signature") or None


def url_citations(
    name: str,
    annotations: list[Annotation],
    path: str,
    context: RequestContext,
    others: list[Annotation],
) -> list[dict[str, Any]]:
    """`url_citation` annotations -> UrlCitation dicts (checked when the text block is made);
    any other type is appended to `others` (kept raw) with a WARN."""
    cites: list[dict[str, Any]] = []
    for j, item in enumerate(annotations):
        detail = item.get("url_citation")
        if item.get("type") != "url_citation" or detail is None:
            Losses(name, context.session_id).lost(
                context.message_id,
                "annotation",
                f"annotation of type {item.get('type')!r} has no canonical form; kept in provider_raw",
                at=f"{path}[{j}]",
            )
            others.append(item)
            continue
        cite: dict[str, Any] = {"type": "url", "url": detail.get("url")}
        for wire_key, key in _CITATION_FIELDS.items():
            value = cast(Fields, detail).get(wire_key)
            if value is not None:
                cite[key] = value
        cites.append(cite)
    return cites


_CITATION_FIELDS = {
    "title": "title",
    "content": "cited_text",
    "start_index": "start_index",
    "end_index": "end_index",
}
"""url_citation field -> UrlCitation field (OpenRouter's cited `content` is the cited text)."""


def cited_text_block(text: str, cites: list[dict[str, Any]], *, provider: str, path: str) -> TextBlock:
    """A text block with its citations, validated (a citation the schema refuses: WireFormatError)."""
    try:
        block: TextBlock = validate_text({"type": "text", "text": text, "citations": cites})
    except ValidationError as exc:
        raise not_canonical(exc, provider=provider, path=path) from None
    return block


def _cite(blocks: list[ContentBlock], first: int, cites: list[dict[str, Any]], name: str, path: str) -> None:
    """Put the citations on the message's text (the last text block read from `content`;
    the indices point into that text), or on a new empty one when there is none."""
    for i in range(len(blocks) - 1, first - 1, -1):
        block = blocks[i]
        if isinstance(block, TextBlock):
            blocks[i] = cited_text_block(block.text, cites, provider=name, path=path)
            return
    blocks.insert(first, cited_text_block("", cites, provider=name, path=path))


def _part(
    name: str,
    facts: ProviderFacts,
    part: AssistantPart,
    path: str,
    *,
    out: AssistantRead,
    context: RequestContext,
) -> None:
    kind = part.get("type")
    if kind == "thinking" and facts.thinking_parts:
        thought, signature = thinking_text(name, part, path)
        signed = {"signature": signature} if signature else {}
        out.blocks.append(thinking_block({"type": "thinking", "text": thought, **signed}))
        return
    text = part.get("text") if kind == "text" else part.get("refusal") if kind == "refusal" else None
    if text is None:
        Losses(name, context.session_id).lost(
            context.message_id, str(kind), f"assistant content part of type {kind!r} skipped", at=path
        )
        out.unsupported.append(part)
        return
    out.blocks.append(text_block(text))
    out.refused = out.refused or kind == "refusal"


def _reasoning(
    name: str,
    facts: ProviderFacts,
    message: AssistantFields,
    path: str,
    *,
    out: AssistantRead,
    context: RequestContext,
) -> None:
    details = message.get("reasoning_details") if facts.reasoning_details else None
    if details:
        for j, item in enumerate(details):
            block = detail_block(name, item, f"{path}.reasoning_details[{j}]", context)
            if block is not None:
                out.blocks.append(block)
        out.details = details
        return
    fields = cast(Fields, message)
    for key in facts.plain_reasoning_keys:
        text = fields.get(key)
        if text:
            out.blocks.append(thinking_block({"type": "thinking", "text": text}))
            out.reasoning_key = key
            return


def detail_block(name: str, item: ReasoningDetail, path: str, context: RequestContext) -> ContentBlock | None:
    """A reasoning_details item -> ThinkingBlock / RedactedThinkingBlock (None: kept raw only)."""
    kind = item.get("type")
    data = item.get("data")
    if kind == "reasoning.encrypted" and data:
        return RedactedThinkingBlock(type="redacted_thinking", data=data)
    key = DETAIL_TEXT_KEYS.get(kind) if kind is not None else None
    if key is None:
        Losses(name, context.session_id).lost(
            context.message_id,
            "reasoning_details",
            f"reasoning_details item of type {kind!r} has no canonical block; kept in provider_raw",
            at=path,
        )
        return None
    fields = cast(Fields, item)
    return thinking_block(
        {"type": "thinking", "text": fields.get(key) or "", "signature": item.get("signature") or None}
    )


def _tool_call(name: str, call: ToolCall, path: str, context: RequestContext, out: AssistantRead) -> None:
    if call.get("type", "function") != "function":
        Losses(name, context.session_id).lost(
            context.message_id,
            "tool_call",
            f"tool call of type {call.get('type')!r} has no canonical form; kept in provider_raw",
            at=path,
        )
        out.unsupported.append(call)
        return
    function = call.get("function")
    if function is None:
        raise WireFormatError("a function tool call has no function", provider=name, path=f"{path}.function")
    tool_name = function["name"]
    canonical = context.tool_ids.register_incoming(name, call.get("id") or None)
    arguments = function.get("arguments", "")
    if isinstance(arguments, dict):
        value = arguments  # some compatible servers send an object
    else:
        value, unparsed = parse_tool_arguments(arguments, context=context, tool_id=canonical, name=tool_name)
        if unparsed is not None:
            out.unparsed[canonical] = unparsed
        elif (kept := kept_arguments(arguments, value)) is not None:
            out.arguments[canonical] = kept
    try:
        block = tool_use_block(canonical, tool_name, value)
    except ValidationError as exc:
        raise not_canonical(exc, provider=name, path=path) from None
    out.blocks.append(block)


__all__ = [
    "AssistantRead",
    "cited_text_block",
    "detail_block",
    "not_canonical",
    "read_assistant",
    "read_response",
    "response_raw",
    "thinking_text",
    "url_citations",
]
