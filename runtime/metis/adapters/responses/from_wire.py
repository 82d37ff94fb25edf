"""A Responses API reply -> one canonical ASSISTANT message (and the output-item reader the
importer shares for request history).

Output items become blocks in order:

- `message`: each `output_text` part a TextBlock, its `url_citation` annotations as v2 url
  citations and its `file_citation`, `container_file_citation` and `file_path` ones as v3
  file citations (this provider's file ids); an annotation of any other type has no
  canonical citation: kept in `provider_raw["annotations"]` with a WARN, §7.3; a
  `refusal` part a TextBlock and stop reason `refusal`. `phase` (`commentary` / `final_answer`) is kept in
  `provider_raw["phase"]` by block index and replayed to the same model.
- `function_call`: a ToolUseBlock whose canonical id maps to `call_id` in the session's
  ToolIdMap; `arguments` kept verbatim in provider_raw when it is not the canonical
  compact JSON (as the Chat Completions reader does).
- `reasoning`: the summary parts (or, where a server shows them, the `reasoning_text`
  parts) joined by a blank line -> ThinkingBlock with `encrypted_content` as its opaque
  signature; with no text but encrypted content -> RedactedThinkingBlock. The item itself
  is kept in `provider_raw["reasoning"]` by block index: it goes back unchanged, to the
  same model only.
- the provider's own tool calls (`web_search_call`, `file_search_call`, ...: facts
  `SERVER_TOOL_CALLS`) -> v2 ServerToolUseBlock (name without `_call`, input its `action`
  or call fields) followed, when the item carries what the tool returned (sources,
  results, outputs, a generated image, MCP output), by a v2 ServerToolResultBlock of it
  (`server_results`); the item kept whole in `provider_raw["server_items"]` at the call's
  index, for replay to this provider only (the pair goes back as that one item);
  `compaction` -> v2 CompactionBlock (its encrypted content as `data`). Both are made by
  `whole_item_blocks`, and message parts by `message_part`, which the stream decoder calls
  on its `output_item.done` items: a streamed reply carries the same blocks.
- anything else (client-run calls such as `computer_call`, extension items): no block;
  kept whole in `provider_raw["other_items"]` with the block position it stood at, with a
  WARN.

Stop reason: `status`, or for `incomplete` its `incomplete_details.reason`
(`max_output_tokens` -> max_tokens, `content_filter`); a completed response with function
calls is `tool_use`.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from metis_schema.v3 import (
    Citation,
    CompactionBlock,
    ContentBlock,
    FileCitation,
    Message,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    StopReason,
    TextBlock,
    UrlCitation,
)
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant, parse_tool_arguments
from ...errors import WireFormatError
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._kit.arguments import kept_arguments
from .._kit.facts import ProviderFacts
from .._kit.importing import text_block, thinking_block, tool_use_block
from .._kit.losses import Losses, wire_message
from .._kit.reader import read
from ..chat.from_wire import not_canonical
from .facts import ANSWERS, AWAITS_CLIENT, PROVIDER, SERVER_TOOL_CALLS, SERVER_TOOL_ITEMS
from .server_results import call_input, server_result
from .wire import (
    CompactionItem,
    FunctionCallItem,
    Item,
    MessageItem,
    Part,
    ReasoningItem,
    Response,
    ServerCallItem,
)

log = logging.getLogger("metis.adapters")

SUMMARY_JOIN = "\n\n"
WHOLE_ITEMS = SERVER_TOOL_CALLS | SERVER_TOOL_ITEMS | {"compaction"}
"""Item types whose blocks the provider delivers complete (`whole_item_blocks`): a stream
carries them as `block` events, not deltas."""
ITEM_FIELDS = "item_fields"
"""provider_raw key of an imported assistant message: `ItemRead.item_fields`."""
INDEX_KEYED = ("reasoning", "server_items", "compaction_ids", "phase", "annotations")
"""ItemRead fields keyed by block index (and `other_items`, by the index it stood at)."""
REPLAY_REASONING_KEYS = ("type", "id", "summary", "encrypted_content")
"""What of a kept reasoning item goes back: not `status`, not the `reasoning_text` content
(Open Responses input items may not carry it)."""


def reasoning_text(item: ReasoningItem) -> str:
    """The text a reasoning item shows: its summary, else its raw reasoning content."""
    parts = item.get("summary") or item.get("content") or []
    return SUMMARY_JOIN.join(p["text"] for p in parts)


@dataclass(slots=True)
class ItemRead:
    """Blocks of a run of output items, plus what provider_raw must keep for them."""

    blocks: list[ContentBlock] = field(default_factory=list)
    reasoning: dict[str, dict[str, Any]] = field(default_factory=dict)
    server_items: dict[str, dict[str, Any]] = field(default_factory=dict)
    compaction_ids: dict[str, str] = field(default_factory=dict)
    phase: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    arguments: dict[str, str] = field(default_factory=dict)
    unparsed: dict[str, str] = field(default_factory=dict)
    other_items: list[dict[str, Any]] = field(default_factory=list)
    item_fields: dict[str, dict[str, Any]] | None = None
    """An import's (`{}`; a reply's None: the writer sends no stored item's id): by block
    index, the `id` and `status` of the assistant message item or function_call it came
    from, and a one-part message's part beside its text (`part`: list content, its
    `annotations`, `logprobs`), so a recorded request replays with them (`ITEM_FIELDS`)."""
    refused: bool = False
    calls: int = 0
    session_id: str = ""
    """The session and the reply the items are read into, for the §7.3 WARNs (`message_id`
    empty while an import makes the message: the WARN names the wire position)."""
    message_id: str = ""

    def close_gaps(self, gaps: list[int]) -> None:
        """Renumber what is kept by block index after indexes that got no block (`gaps`,
        sorted): a stream that reserved an index for an item that never finished, or ended
        first. The content list has no hole there, so entries past a gap move down."""
        if not gaps:
            return

        def moved(index: int) -> int:
            return index - bisect_left(gaps, index)

        for name in INDEX_KEYED:
            kept: dict[str, Any] = getattr(self, name)
            setattr(self, name, {str(moved(int(k))): v for k, v in kept.items()})
        self.other_items = [{**o, "at": moved(o["at"])} for o in self.other_items]

    def raw(self) -> dict[str, Any]:
        """The provider_raw entries (empty ones left out)."""
        found = {
            "reasoning": self.reasoning,
            "server_items": self.server_items,
            "compaction_ids": self.compaction_ids,
            "phase": self.phase,
            "annotations": self.annotations,
            "arguments": self.arguments,
            "unparsed_arguments": self.unparsed,
            "other_items": self.other_items,
            ITEM_FIELDS: self.item_fields,
        }
        return {k: v for k, v in found.items() if v}


def read_items(
    items: list[Item], *, path: str, context: RequestContext, out: ItemRead | None = None, start: int = 0
) -> ItemRead:
    """Checked output (or assistant-history) items -> canonical blocks in order; `items`
    stand at `path[start]` onwards (a run of a request's input)."""
    out = ItemRead() if out is None else out
    for i, item in enumerate(items, start):
        where = f"{path}[{i}]"
        kind = item.get("type", "message")
        if kind == "message":
            _message(item, where, out)  # type: ignore[arg-type]
        elif kind == "function_call":
            _function_call(item, where, context, out)  # type: ignore[arg-type]
        elif kind == "reasoning":
            _reasoning(item, out)  # type: ignore[arg-type]
        elif kind in WHOLE_ITEMS:
            out.blocks.extend(whole_item_blocks(item, len(out.blocks), where, out))  # type: ignore[arg-type]
        else:
            keep_other(dict(item), where, out, at=len(out.blocks))
    return out


def keep_other(item: dict[str, Any], path: str, out: ItemRead, *, at: int) -> None:
    """An item with no canonical block: kept whole, with the block position `at` it stood at."""
    kind = str(item.get("type") or "item")
    reason = f"output item of type {kind!r} has no canonical block; kept in provider_raw, not carried"
    Losses(PROVIDER, out.session_id).lost(out.message_id or wire_message(path), kind, reason, at=path)
    out.other_items.append({"at": at, "item": item})


FILE_ANNOTATIONS = frozenset({"file_citation", "container_file_citation", "file_path"})
"""Annotations naming a file of this provider: v3 FileCitations (`file_citation`: a file
search result, by position; `container_file_citation`: a file a code interpreter made,
by span; `file_path`: a link to a generated file, by position)."""


def _citation(annotation: dict[str, Any]) -> Citation | None:
    kind = annotation.get("type")
    if kind == "url_citation" and annotation.get("url"):
        return UrlCitation(
            type="url",
            url=annotation["url"],
            title=annotation.get("title"),
            start_index=annotation.get("start_index"),
            end_index=annotation.get("end_index"),
        )
    if kind in FILE_ANNOTATIONS and annotation.get("file_id"):
        fields = {
            k: annotation.get(k) for k in ("filename", "container_id", "start_index", "end_index", "index")
        }
        return FileCitation(
            type="file",
            provider=PROVIDER,
            file_id=annotation["file_id"],
            **{k: v for k, v in fields.items() if v is not None},
        )
    return None


def citations(annotations: list[dict[str, Any]] | None) -> list[Citation] | None:
    """The url and file annotations of an output_text part as canonical citations, in
    order (an annotation's fields are not declared on the wire: one of the wrong type is a
    WireFormatError here)."""
    try:
        found = [c for a in annotations or () if (c := _citation(a)) is not None]
    except ValidationError as exc:
        raise WireFormatError(
            f"an annotation cannot be read as a citation: {pydantic_problems(exc)[0]}", provider=PROVIDER
        ) from None
    return found or None


def note_annotations(annotations: list[dict[str, Any]] | None, index: int, path: str, out: ItemRead) -> None:
    """Annotations with no canonical citation (a type other than url and file ones) of the
    text block at `index`: kept raw with a WARN."""
    annotations = [a for a in annotations or () if _citation(a) is None]
    if not annotations:
        return
    kinds = ", ".join(sorted({str(a.get("type")) for a in annotations}))
    reason = f"{len(annotations)} annotation(s) ({kinds}) have no canonical citation; kept in provider_raw"
    Losses(PROVIDER, out.session_id).lost(out.message_id or wire_message(path), "citation", reason, at=path)
    out.annotations[str(index)] = annotations


def message_part(part: Part, index: int, path: str, out: ItemRead, *, phase: str | None) -> TextBlock | None:
    """One content part of a message item -> the text block at `index` (an `output_text`
    with its url citations, or a `refusal`), recording its phase and uncarried annotations;
    any other part is kept whole (None). A whole reply and a stream's done item both read
    their parts here, so they make the same block."""
    kind = part.get("type")
    if kind in ("output_text", "input_text", "text") and "text" in part:
        text = part["text"]
    elif kind == "refusal" and "refusal" in part:
        text = part["refusal"]
        out.refused = True
    else:
        keep_other(dict(part), path, out, at=index)
        return None
    cited = citations(part.get("annotations"))
    if phase:
        out.phase[str(index)] = phase
    note_annotations(part.get("annotations"), index, f"{path}.annotations", out)
    return text_block(text) if cited is None else TextBlock(type="text", text=text, citations=cited)


def message_parts(item: MessageItem) -> list[Part]:
    """A message item's parts (string content is one output_text part)."""
    content = item["content"]
    return [{"type": "output_text", "text": content}] if isinstance(content, str) else content


def _message(item: MessageItem, path: str, out: ItemRead) -> None:
    phase = item.get("phase")
    parts = message_parts(item)
    for j, part in enumerate(parts):
        block = message_part(part, len(out.blocks), f"{path}.content[{j}]", out, phase=phase)
        if block is not None:
            if len(parts) == 1:  # a block is an item again only where the item had one part
                listed = isinstance(item["content"], list)
                _keep_item_fields(
                    item, out, {"part": {k: v for k, v in part.items() if k != "text"}} if listed else {}
                )
            out.blocks.append(block)


def _keep_item_fields(item: Any, out: ItemRead, spelled: dict[str, Any]) -> None:
    """Where an import keeps them (`ItemRead.item_fields`), the fields of the item the next
    block comes from that the writer does not make itself."""
    if out.item_fields is None:
        return
    kept = {key: item[key] for key in ("id", "status") if item.get(key) is not None} | spelled
    if kept:
        out.item_fields[str(len(out.blocks))] = kept


def _function_call(item: FunctionCallItem, path: str, context: RequestContext, out: ItemRead) -> None:
    canonical = context.tool_ids.register_incoming(PROVIDER, item["call_id"])
    arguments = item["arguments"]
    value, unparsed = parse_tool_arguments(arguments, context=context, tool_id=canonical, name=item["name"])
    if unparsed is not None:
        out.unparsed[canonical] = unparsed
    elif (kept := kept_arguments(arguments, value)) is not None:
        out.arguments[canonical] = kept
    try:
        block = tool_use_block(canonical, item["name"], value)
    except ValidationError as exc:
        raise not_canonical(exc, provider=PROVIDER, path=path) from None
    _keep_item_fields(item, out, {})
    out.blocks.append(block)
    out.calls += 1


def replay_item(item: ReasoningItem | dict[str, Any]) -> dict[str, Any]:
    """The part of a reasoning item that goes back to its endpoint."""
    return {k: item[k] for k in REPLAY_REASONING_KEYS if item.get(k) is not None}  # type: ignore[literal-required]


def reasoning_block(item: ReasoningItem) -> ContentBlock | None:
    """Thinking (encrypted content as its signature), redacted thinking, or None (nothing to show)."""
    text = reasoning_text(item)
    encrypted = item.get("encrypted_content") or None
    if text:
        return thinking_block({"type": "thinking", "text": text, "signature": encrypted})
    if encrypted:
        return RedactedThinkingBlock(type="redacted_thinking", data=encrypted)
    return None


def _reasoning(item: ReasoningItem, out: ItemRead) -> None:
    block = reasoning_block(item)
    if block is None:
        # A stored item's reference (store: true without encrypted content) shows nothing
        # and can only go back by id: kept whole like any item without a block.
        out.other_items.append({"at": len(out.blocks), "item": dict(item)})
        return
    out.reasoning[str(len(out.blocks))] = replay_item(item)
    out.blocks.append(block)


def whole_item_blocks(
    item: CompactionItem | ServerCallItem, index: int, path: str, out: ItemRead
) -> list[ContentBlock]:
    """An item the provider delivers complete (`WHOLE_ITEMS`) -> its blocks from `index`
    on, the item's replay state recorded at `index`. One conversion for a whole reply, a
    stream's done item and imported history alike:

    - `compaction` -> [CompactionBlock] (its encrypted content as `data`, replayed only
      here; its id kept in `compaction_ids`);
    - a call of the provider's own tool -> [ServerToolUseBlock] (name without `_call`,
      input `server_results.call_input`), then, when the item carries what the tool
      returned, its ServerToolResultBlock (`server_results.server_result`); the item is
      kept whole in `server_items` at the call's index, and the pair goes back as that one
      item."""
    if item["type"] == "compaction":
        compacted: CompactionItem = item  # type: ignore[assignment]
        data = compacted.get("encrypted_content")
        if not data:
            raise WireFormatError(
                "a compaction item needs its encrypted_content",
                provider=PROVIDER,
                path=f"{path}.encrypted_content",
            )
        if compacted.get("id"):
            out.compaction_ids[str(index)] = str(compacted["id"])
        return [CompactionBlock(type="compaction", provider=PROVIDER, data=data)]
    call: ServerCallItem = item  # type: ignore[assignment]
    kind = call["type"]
    if kind in ANSWERS:
        return _answer_blocks(call, index, path, out)
    name = kind.removesuffix("_call")
    item_id = call.get("id") or (call.get("call_id") if kind in SERVER_TOOL_ITEMS else None)
    if not item_id:
        raise WireFormatError(f"a {kind} item needs its id", provider=PROVIDER, path=f"{path}.id")
    out.server_items[str(index)] = dict(call)
    if kind in AWAITS_CLIENT or (kind == "tool_search_call" and call.get("execution") == "client"):
        out.calls += 1
    use = ServerToolUseBlock(
        type="server_tool_use", id=item_id, provider=PROVIDER, name=name, input=call_input(call)
    )
    result = server_result({**call, "id": item_id}, name, path)
    return [use] if result is None else [use, result]


def _answer_blocks(item: ServerCallItem, index: int, path: str, out: ItemRead) -> list[ContentBlock]:
    """An item answering an earlier one (`ANSWERS`: a tool search's output, an MCP
    approval) -> its server_tool_result, answering the block of that item: the one named
    by the answer's field, else (a server-run search names none) the latest of that type
    in this run; the item kept whole at `index` and sent back as itself."""
    field, answered_type = ANSWERS[item["type"]]
    named = item.get(field)
    answered = named if isinstance(named, str) and named else None
    if answered is None or field == "call_id":
        for kept in reversed(list(out.server_items.values())):
            if kept.get("type") == answered_type and (answered is None or kept.get("call_id") == answered):
                answered = kept.get("id") or kept.get("call_id") or answered
                break
    answered = answered or item.get("id") or f"{item['type']}@{index}"
    out.server_items[str(index)] = dict(item)
    result = server_result(item, answered_type.removesuffix("_call"), path, answers=answered)
    return [] if result is None else [result]


def stop_reason(facts: ProviderFacts, response: Response, *, calls: int, refused: bool) -> StopReason:
    """Canonical stop reason of a finished response (see module doc)."""
    status = response.get("status") or "completed"
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        return facts.stop_reason(details.get("reason"))
    if status == "completed":
        if calls:
            return StopReason.tool_use
        if refused:
            return StopReason.refusal
    return facts.stop_reason(status)


def response_meta(response: Response) -> dict[str, Any]:
    """provider_raw entries describing the response itself."""
    details = response.get("incomplete_details") or {}
    found = {
        "id": response.get("id"),
        "model": response.get("model"),
        "status": response.get("status"),
        "incomplete_reason": details.get("reason"),
    }
    return {k: v for k, v in found.items() if v is not None}


def reply_id(message: Message) -> str | None:
    """The id the provider gave a stored reply of this adapter (`response_meta` kept it), so
    a later request naming it (`previous_response_id`) can be resolved (`metis.continuation`)."""
    raw = message.metadata.provider_raw or {}
    found = raw.get("id") if raw.get("adapter") == PROVIDER else None
    return found if isinstance(found, str) else None


def read_response(facts: ProviderFacts, body: Any, context: RequestContext) -> Message:
    """A response object -> one COMPLETE canonical ASSISTANT message."""
    if isinstance(body, dict) and body.get("error") and "output" not in body:
        raise facts.parse_error(body)
    response = read(Response, body, provider=PROVIDER, what="reply")
    error = response.get("error")
    if response.get("status") == "failed" and error:
        raise facts.parse_error({"error": error})  # a kind named only by `code` is the row's to read
    out = ItemRead(session_id=context.session_id, message_id=context.message_id or "")
    items = read_items(response["output"], path="output", context=context, out=out)
    return finish_assistant(
        context,
        provider=PROVIDER,
        content=items.blocks or [TextBlock(type="text", text="")],
        counts=normalize_usage(PROVIDER, response.get("usage"), read_as=dict),  # read with `Response`
        stop_reason=stop_reason(facts, response, calls=items.calls, refused=items.refused),
        provider_raw={"adapter": PROVIDER, **response_meta(response), **items.raw()},
    )


__all__ = [
    "ITEM_FIELDS",
    "WHOLE_ITEMS",
    "ItemRead",
    "citations",
    "keep_other",
    "message_part",
    "message_parts",
    "note_annotations",
    "read_items",
    "read_response",
    "reasoning_block",
    "reasoning_text",
    "replay_item",
    "reply_id",
    "response_meta",
    "stop_reason",
    "whole_item_blocks",
]
