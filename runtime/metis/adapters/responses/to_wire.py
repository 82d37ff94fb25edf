"""Canonical messages -> a Responses API request body (the request writer).

Stateless by design: the whole history goes in `input` every time (no
`previous_response_id`), so `store: false` works; the OpenAI row writes it and asks for
`include: ["reasoning.encrypted_content"]`, which is what lets reasoning survive.

- SYSTEM -> a `system` (or `developer`) message item in place; with the `instructions`
  directive the leading SYSTEM message goes to `instructions` instead.
- USER -> a message item with `input_text` / `input_image` / `input_file` parts (v2
  documents: inline data with a filename, a URL, or this provider's own file id).
- ASSISTANT -> items in block order: text -> an assistant message item (string content,
  with its kept `phase`, else the message's canonical `metadata.phase`; citations are not
  sent back: an input message carries text, so another provider's are dropped with one
  WARN per message, `Losses.citations`; an imported item goes back to the same model
  with the `id`, `status` and one-part content it had, annotations included:
  `from_wire.ITEM_FIELDS`, kept by imports only);
  tool_use -> a `function_call` with the session's call id for this provider (OpenAI's
  rule: at most 40 characters, within the 64 allowed); thinking -> the kept reasoning item
  (id, summary, encrypted_content), only when the message came from this adapter and the
  same model, else dropped with a WARN (§7.3); a v2 server_tool_use -> the kept item
  (its result inside it), same model only; the server_tool_result this provider made of
  that item sends nothing more (it went inside the item); any other server_tool_result
  (another provider's, or one whose call did not go back) is dropped with a WARN; a v2 compaction of this
  provider -> a `compaction` item with its encrypted content, to any model here (anyone
  else's is dropped with a WARN). Items with no block that a
  reply kept go back at their position, to the same model only.
- TOOL -> a `function_call_output` (a string, or input parts when it holds images);
  `is_error` has no field: the text carries the failure.
- Tools an imported `additional_tools` item made available (marked in this provider's
  `provider_data`) go back as that item, before the message it stood before, and are not
  declared in `tools` again (`offered_items`).

Canonical options go where the facts row says (structured output as `text.format`); this
provider's `provider_options` entry, then `AdapterOptions.extra`, are deep-merged last
(other providers' entries are reported as dropped), except the reserved `"metis"` directives:
`dialect` (the row, set by the client from the base URL), `system_role`, `instructions`,
`stateless` (false: an imported request that lacked `store` or `include` replays without
the fields the writer otherwise adds, a recorded value coming back through the entry; a
fresh send needs them for reasoning to survive, a replay is the request as sent),
`spelled` (message id -> how an import found its item spelled: `INPUT_STRING`, `TYPELESS`,
`STRING_CONTENT`), `items_before` (`ITEMS_BEFORE`), and `builtin_tools` (a caller's
non-function tools appended to `tools`, e.g. `{"type": "web_search"}`). Canonical provider
tools (v3 `kind`) are written in order with the function tools (`provider_tools`: this
provider's own declaration verbatim, another's by meaning, or dropped with a WARN).
Function tools carry `ToolDefinition.strict` (false unless asked: OpenAI's Responses
default is true, and canonical schemas need not meet strict mode's rules), or the literal
an import kept (`strict`), and `defer_loading`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    AudioBlock,
    CompactionBlock,
    DocumentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ...catalog import load_catalog
from ...errors import WireFormatError
from ...workspace import inline_base64, workspace_file_base64
from .._kit.arguments import replay_arguments
from .._kit.base import AdapterOptions, WireBody
from .._kit.facts import ProviderFacts
from .._kit.images import data_url, image_base64
from .._kit.losses import Losses
from .._kit.media_admission import admit, document_losses, request_capabilities
from .._kit.options import DIRECTIVES, SPELLED, merge, split_directives
from .._kit.provenance import foreign_reasoning, own_raw, produced_at, replays_opaque
from .._kit.provider_tools import ROWS, is_provider_tool, write_tool
from .._kit.strict import write_strict
from .._kit.tool_fields import warn_kept
from .facts import AUDIO_FORMATS, DIALECTS, FACTS, OPENAI, PROVIDER
from .from_wire import ITEM_FIELDS

log = logging.getLogger("metis.adapters")

INPUT_STRING = "input_string"
"""`SPELLED` key of a USER message imported from an `input` that was one string: while it
is the whole input and one text block, `input` is that string again."""
TYPELESS = "typeless"
"""`SPELLED` key of a USER or SYSTEM message imported from a message item without `type`
(the easy input message): written without it again."""
ITEMS_BEFORE = "items_before"
"""The `metis` directive of an import's `item_reference` items: message id -> the items
that stood before it, written there again (like `previous_response_id`, they name items
stored at the server the request went to); to another provider reported as not sent."""
STRING_CONTENT = "string_content"
"""`SPELLED` key of a USER message whose item's `content` was a string: a string again
while it is one text block (SYSTEM content is always written as a string)."""


def directives(options: AdapterOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metis directives, the fields to merge): the shared checks, then the dialect row's name."""
    found, extra = split_directives(options, PROVIDER)
    if found.get("dialect", OPENAI.dialect) not in DIALECTS:
        raise WireFormatError(
            f"dialect must be one of {sorted(DIALECTS)}", provider=PROVIDER, path="extra.metis.dialect"
        )
    return found, extra


def write_request(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
) -> WireBody:
    """Canonical messages, tools and options -> the request body (see module doc)."""
    found, extra = directives(options)
    facts = DIALECTS[found.get("dialect", OPENAI.dialect)]
    entry = load_catalog().resolve(options.model)
    caps = request_capabilities(entry, messages, adapter=PROVIDER)
    writer = _Writer(options, entry.id, found, caps)
    body: dict[str, Any] = {"model": entry.wire_model}
    history = list(messages)
    if found.get("instructions") and history and history[0].role == Role.system:
        texts = [b.text for b in history[0].content if isinstance(b, TextBlock)]
        body["instructions"] = "\n\n".join(texts)
        history = history[1:]
    offered = offered_items(tools)
    for message in history:
        writer.items.extend(offered.pop(message.id, ()))
        writer.message(message)
    for rest in offered.values():
        writer.items.extend(rest)
    body["input"] = writer.items
    if len(writer.items) == 1 and len(history) == 1 and writer.shape(history[0]).get(INPUT_STRING):
        text = _one_text(writer.items[0])
        body["input"] = writer.items if text is None else text
    writer.losses.cache_points(messages, "this API caches automatically")
    writer.losses.citations(
        messages,
        "an input message carries text; annotations go only on an output message item, "
        "which needs the stored item's id",
    )
    _options(facts, body, tools, options, found, thinks=caps.supports_thinking)
    merge(body, extra)
    return body


def offered_later(tool: ToolDefinition) -> dict[str, Any] | None:
    """The `additional_tools` marker an import left on `tool` (see the importer), if any."""
    marker = (tool.provider_data or {}).get(PROVIDER, {}).get("additional_tools")
    return marker if isinstance(marker, dict) else None


def offered_items(tools: Sequence[ToolDefinition]) -> dict[str | None, list[dict[str, Any]]]:
    """Message id (None: the end) -> the `additional_tools` items that stood before it, as
    they came; their tools are not declared in `tools` again."""
    out: dict[str | None, list[dict[str, Any]]] = {}
    for tool in tools:
        marker = offered_later(tool)
        if marker is not None and isinstance(marker.get("item"), dict):
            out.setdefault(marker.get("before"), []).append(dict(marker["item"]))
    return out


def _options(
    facts: ProviderFacts,
    body: dict[str, Any],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
    found: dict[str, Any],
    *,
    thinks: bool,
) -> None:
    # `stop` and `thinking_budget` have no Responses field: options_to_wire says so (WARN).
    facts.options_to_wire(
        {
            "max_tokens": options.max_tokens,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "stop": options.stop,
            "thinking_budget": options.thinking_budget,
            "reasoning_effort": options.reasoning_effort,
        },
        body,
        session_id=options.session_id,
        spelled=found.get("option_paths"),
    )
    facts.output_schema_to_wire(options.output_schema, body)
    warn_kept(PROVIDER, tools, session_id=options.session_id)
    wire_tools: list[dict[str, Any]] = []
    for tool in tools:
        if offered_later(tool) is not None:
            continue  # offered by its `additional_tools` item, where it stood
        if is_provider_tool(tool):
            wire = write_tool(ROWS[PROVIDER], tool, session_id=options.session_id)
            if wire is not None:
                wire_tools.append(wire)
            continue
        function: dict[str, Any] = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        }
        write_strict(tool, function, PROVIDER, always=True)
        if tool.defer_loading:
            function["defer_loading"] = True
        wire_tools.append(function)
    wire_tools.extend(found.get("builtin_tools") or ())
    facts.tools_to_wire(body, wire_tools, options.tool_choice)
    if found.get("stateless", True):  # a recorded request replays without fields it did not have
        if facts.request_store is not None:
            body["store"] = facts.request_store
        if facts.include_encrypted_reasoning and thinks:
            body["include"] = ["reasoning.encrypted_content"]
    if options.stream:
        body["stream"] = True


def _with_fields(item: dict[str, Any], kept: dict[str, Any] | None, text: str | None) -> dict[str, Any]:
    """An assistant-side item with the fields its import kept (`ITEM_FIELDS`): its `id` and
    `status`, and a message's content as the one part it was (`part`, with `text`)."""
    if not kept:
        return item
    out = {**item, **{k: v for k, v in kept.items() if k != "part"}}
    if text is not None and isinstance(kept.get("part"), dict):
        out["content"] = [{**kept["part"], "text": text}]
    return out


def _one_text(item: dict[str, Any]) -> str | None:
    """The text of a message item that is one text and nothing else, else None."""
    content = item["content"]
    if isinstance(content, str):
        return content
    if len(content) == 1 and content[0].keys() == {"type", "text"} and content[0]["type"] == "input_text":
        return str(content[0]["text"])
    return None


def _spelled(item: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """A message item as its import found it (`TYPELESS`, `STRING_CONTENT`; none kept: as is)."""
    if kept.get(STRING_CONTENT) and (text := _one_text(item)) is not None:
        item["content"] = text
    if kept.get(TYPELESS):
        del item["type"]
    return item


class _Writer:
    """One request's input items."""

    def __init__(
        self, options: AdapterOptions, model_id: str, found: dict[str, Any], caps: AdapterCapabilities
    ) -> None:
        self.options = options
        self.losses = Losses(PROVIDER, options.session_id)
        self.model_id = model_id
        self.caps = caps
        self.system_role: str = found.get("system_role", "system")
        self.spelled: dict[str, Any] = found.get(SPELLED) or {}
        """Message id -> how an import found its item spelled (`SPELLED`)."""
        self.before: dict[str, Any] = found.get(ITEMS_BEFORE) or {}
        """Message id -> the `item_reference` items that stood before it (`ITEMS_BEFORE`)."""
        self.items: list[dict[str, Any]] = []

    def message(self, message: Message) -> None:
        self.items.extend(self.before.get(message.id) or ())
        if message.role == Role.system:
            texts = [b.text for b in message.content if isinstance(b, TextBlock)]
            if texts:  # an empty SYSTEM message is a composition placeholder (§5.1.2)
                item = {"type": "message", "role": self.system_role, "content": "\n\n".join(texts)}
                self.items.append(_spelled(item, self.shape(message)))
        elif message.role == Role.user:
            self.user(message)
        elif message.role == Role.assistant:
            self.assistant(message)
        else:
            self.tool(message)

    def shape(self, message: Message) -> dict[str, Any]:
        """How an import found `message`'s item spelled ({} for any other message)."""
        found = self.spelled.get(message.id)
        return found if isinstance(found, dict) else {}

    def wire_id(self, canonical: str) -> str:
        return self.options.tool_ids.outgoing(canonical, PROVIDER)

    def user(self, message: Message) -> None:
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock):
                parts.append({"type": "input_text", "text": block.text})
            elif isinstance(block, ImageBlock | DocumentBlock | AudioBlock):
                part = self.media(block, message, index)
                if part is not None:
                    parts.append(part)
            else:
                self.losses.block(
                    message, index, block.type, "USER messages carry text, images, documents and audio only"
                )
        if parts:
            item = {"type": "message", "role": "user", "content": parts}
            self.items.append(_spelled(item, self.shape(message)))

    def media(
        self, block: ImageBlock | DocumentBlock | AudioBlock, message: Message, index: int
    ) -> dict[str, Any] | None:
        """An `input_image`, `input_file` or `input_audio` part, or None when the target
        cannot take the block (`media_admission.admit`, the audio formats: dropped with the WARN)."""
        refused = admit(block, self.caps, self.model_id, FACTS)
        if refused is None and isinstance(block, AudioBlock):
            refused = self.audio_refused(block)
        if refused is not None:
            self.losses.block(message, index, block.type, refused)
            return None
        if isinstance(block, AudioBlock):
            # base64 or a workspace file (audio_refused turned URLs and file ids away)
            data = inline_base64(block, self.options.workspace, max_bytes=self.options.max_media_bytes)
            audio = {"data": data, "format": AUDIO_FORMATS[block.media_type]}
            return {"type": "input_audio", "input_audio": audio}
        return self.image(block) if isinstance(block, ImageBlock) else self.document(block, message, index)

    def audio_refused(self, block: AudioBlock) -> str | None:
        """Why an audio block cannot be an `input_audio` part (None: it can)."""
        if block.media_type not in AUDIO_FORMATS:
            return f"input_audio does not take {block.media_type}"
        if block.source.kind in (MediaSourceKind.url, MediaSourceKind.file_id):
            return "input_audio takes base64 bytes only"
        return None

    def document(self, block: DocumentBlock, message: Message, index: int) -> dict[str, Any]:
        """An `input_file` part: inline data (with a filename, as OpenAI requires), a URL, or
        this provider's own file id (the title goes as the filename of inline data only)."""
        source = block.source
        inline = source.kind in (MediaSourceKind.base64, MediaSourceKind.file_ref)
        document_losses(
            block, message, index, adapter=PROVIDER, part="input_file", carried={"title"} if inline else ()
        )
        if source.kind == MediaSourceKind.file_id:
            return {"type": "input_file", "file_id": source.data}
        if source.kind == MediaSourceKind.url:
            return {"type": "input_file", "file_url": source.data}
        if source.kind == MediaSourceKind.file_ref:
            b64 = workspace_file_base64(
                source.data, self.options.workspace, max_bytes=self.options.max_media_bytes
            )
        else:
            b64 = source.data
        return {
            "type": "input_file",
            "filename": block.title or "document",
            "file_data": data_url(block.media_type, b64),
        }

    def image(self, block: ImageBlock) -> dict[str, Any]:
        if block.source.kind == MediaSourceKind.file_id:
            return {"type": "input_image", "file_id": block.source.data, "detail": "auto"}
        b64 = image_base64(block, self.options)
        url = block.source.data if b64 is None else data_url(block.media_type, b64)
        return {"type": "input_image", "image_url": url, "detail": "auto"}

    def assistant(self, message: Message) -> None:
        raw = own_raw(message, PROVIDER)
        own = (
            bool(raw)
            and message.metadata.model == self.model_id
            and replays_opaque(message, PROVIDER, self.options)
        )
        phases = raw.get("phase") or {}
        fields = (raw.get(ITEM_FIELDS) or {}) if own else {}
        reasoning = raw.get("reasoning") or {}
        server_items = raw.get("server_items") or {}
        compaction_ids = raw.get("compaction_ids") or {}
        others = list(raw.get("other_items") or ()) if own else []
        replayed: set[str] = set()  # ids of the server tool calls sent back as their items
        for index, block in enumerate(message.content):
            while others and others[0].get("at", 0) <= index:
                self.items.append(others.pop(0)["item"])
            key = str(index)
            if isinstance(block, TextBlock):
                item: dict[str, Any] = {"type": "message", "role": "assistant", "content": block.text}
                phase = phases.get(key) if own else None
                if phase is None and message.metadata.phase is not None:
                    phase = message.metadata.phase.value  # the canonical phase, from any provider
                if phase is not None:
                    item["phase"] = phase
                self.items.append(_with_fields(item, fields.get(key), block.text))
            elif isinstance(block, ToolUseBlock):
                call = {
                    "type": "function_call",
                    "call_id": self.wire_id(block.id),
                    "name": block.name,
                    "arguments": replay_arguments(block, raw),
                }
                self.items.append(_with_fields(call, fields.get(key), None))
            elif isinstance(block, ServerToolUseBlock):
                kept = server_items.get(key) if own and block.provider == PROVIDER else None
                if kept is not None:
                    self.items.append(dict(kept))
                    replayed.add(block.id)
                else:
                    self.losses.block(
                        message, index, block.type, "a server tool call replays only to the model that ran it"
                    )
            elif isinstance(block, ServerToolResultBlock):
                # This provider's result is part of its call item, already sent with the
                # server_tool_use: nothing more to send. Any other result is readable only
                # by the provider (and model) that produced it.
                if block.provider == PROVIDER and block.tool_use_id in replayed and key not in server_items:
                    continue
                answer = server_items.get(key) if own and block.provider == PROVIDER else None
                if answer is not None:  # an item of its own answering an earlier one (ANSWERS)
                    self.items.append(dict(answer))
                    continue
                self.losses.block(message, index, block.type, _result_drop_reason(block))
            elif isinstance(block, CompactionBlock):
                if (
                    block.provider == PROVIDER
                    and block.data
                    and replays_opaque(message, PROVIDER, self.options)
                ):
                    compacted: dict[str, Any] = {"type": "compaction", "encrypted_content": block.data}
                    if own and key in compaction_ids:
                        compacted["id"] = compaction_ids[key]
                    self.items.append(compacted)
                else:
                    self.losses.block(
                        message,
                        index,
                        block.type,
                        f"a compaction by {block.provider} of {produced_at(message)} is readable only there",
                    )
            elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
                if own and key in reasoning:
                    self.items.append(dict(reasoning[key]))
                else:
                    self.losses.block(message, index, block.type, self.reasoning_drop_reason(message, own))
            else:
                self.losses.block(
                    message, index, block.type, "ASSISTANT messages carry text, tool calls and reasoning only"
                )
        self.items.extend(o["item"] for o in others)

    def reasoning_drop_reason(self, message: Message, own: bool) -> str:
        if own:
            return "reasoning with no kept reasoning item has nothing to send back"
        return foreign_reasoning(message, self.model_id, PROVIDER, self.options)

    def tool(self, message: Message) -> None:
        block = message.content[0] if message.content else None
        if not isinstance(block, ToolResultBlock):
            raise WireFormatError(
                "a TOOL message must hold one tool_result block", provider=PROVIDER, message_id=message.id
            )
        parts: list[dict[str, Any]] = []
        for part in block.content:
            if isinstance(part, TextBlock):
                parts.append({"type": "input_text", "text": part.text})
            elif isinstance(part, ImageBlock | DocumentBlock):
                media = self.media(part, message, 0)
                if media is not None:
                    parts.append(media)
            else:
                self.losses.block(
                    message, 0, part.type, "function_call_output carries text, images and documents only"
                )
        output: str | list[dict[str, Any]]
        if all(p["type"] == "input_text" for p in parts):
            output = "\n\n".join(p["text"] for p in parts)
        else:
            output = parts
        self.items.append(
            {"type": "function_call_output", "call_id": self.wire_id(block.tool_use_id), "output": output}
        )


def _result_drop_reason(block: ServerToolResultBlock) -> str:
    if block.provider == PROVIDER:
        return "a built-in tool's result replays only inside its call item, to the model that ran it"
    return f"a result of {block.provider}'s own tool replays only there"


__all__ = ["DIRECTIVES", "directives", "write_request"]
