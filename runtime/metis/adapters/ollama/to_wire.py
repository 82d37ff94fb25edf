"""Canonical messages -> an Ollama `/api/chat` request body, and the pre-flight token estimate.

What the writer must know (spec/provider-wire-formats.md §4, checked against ollama 0.6.3):

- `content` is always a **string**: several text blocks of one message are joined with a
  blank line (`TEXT_JOIN`) so paragraphs stay apart; an imported message is one text
  block, so Ollama -> canonical -> Ollama is exact.
- Images travel per message as `images: [raw base64]`: no media type, no URLs, no data:
  prefix (except an imported message's images, which keep the data URLs they came as and
  go back to the model they were sent to whatever the catalog says: `IMAGES_SENT_TO`).
  URL images are fetched only when `allow_url_fetch` is set (through `url_fetcher`, else
  the public-http(s)-only `metis.fetch.UrlFetcher`), else dropped. Images in a tool result
  go to the tool message's own `images`.
- Tool calls carry `arguments` as a JSON **object**. Tool results carry the tool's *name*
  (`tool_name`), never an id: the name comes from the ToolUseBlock with that id anywhere in
  the history (the last one wins); an imported result sent without one goes without one
  (`UNNAMED_RESULT`). A call's `id` and `function.index` are replayed only
  for calls Ollama itself made. `is_error` has no wire field (a lossy-projection WARN).
- Unsigned thinking is replayed; thinking signed by another provider (written for that
  model's verifier) and redacted thinking are dropped.
- The target model's catalog capabilities decide the rest: thinking to a model without
  thinking and images to a text-only model (or of a media type it lacks) are dropped;
  tools are not sent to a model without tool support (the server answers 400), nor for
  tool choice "none" (Ollama has no tool-choice field).
- Sampling options nest under `options` (`FACTS.options`), a structured-output schema is
  `format`; `stream` is always sent because the REST API defaults it to true (except to
  replay a request that streamed without saying so: `STREAM_SENT`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    ImageBlock,
    MediaSourceKind,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ...catalog import load_catalog
from ...errors import AdapterError, MetisError
from ...fetch import UrlFetcher
from .._kit.base import AdapterOptions, WireBody
from .._kit.facts import ToolChoice, tool_choice_meaning
from .._kit.images import data_url, image_base64, parse_data_url
from .._kit.importing import function_tool
from .._kit.losses import Losses
from .._kit.media_admission import admit, request_capabilities
from .._kit.options import OPTION_PATHS, merge, spelled, split_directives
from .._kit.provenance import own_raw
from .._kit.provider_tools import is_provider_tool, row_of, warn_deferred, write_tools
from .._kit.tool_fields import warn_kept
from .._kit.tool_schema import inline_refs, uses_refs
from .facts import FACTS, NAME

IMAGES_SENT_TO = "images_sent_to"
"""`SPELLED` key of an imported USER or TOOL message that sent images: the model they
went to. Written back to that model they go again (the request as it was sent), even where
the catalog says it takes no images; to any other model the catalog decides."""
DATA_URL_IMAGES = "data_url_images"
"""`SPELLED` key: the positions, in the message's `images`, of those a lax client sent
as data URLs (the server's form is raw base64): written as data URLs again."""
STREAM_SENT = "stream_sent"
"""The `metis` directive of an import whose request left `stream` out (the REST API then
streams): a streamed replay leaves it out too."""
UNNAMED_RESULT = "unnamed_result"
"""`SPELLED` key of an imported TOOL message sent without `tool_name` (many clients
send none; the import paired it by order): written without one again."""

TEXT_JOIN = "\n\n"
"""Separator between the text blocks of one message (Ollama `content` is one string)."""

ROLE_TO_WIRE: dict[Role, str] = {
    Role.system: "system",
    Role.user: "user",
    Role.assistant: "assistant",
    Role.tool: "tool",
}


def write_request(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
) -> WireBody:
    """`{model, messages, tools?, stream, options?, format?, think?}`, then Ollama's own
    options and `extra` deep-merged on top (`options.own_fields`: their `options` merge
    into the sampling ones), so any Ollama knob can be passed."""
    entry = load_catalog().resolve(options.model)
    if entry.provider != NAME:
        raise AdapterError(
            f"model {options.model!r} is a {entry.provider} model, not an Ollama one", provider=NAME
        )
    caps = request_capabilities(entry, messages, adapter=NAME)
    body: dict[str, Any] = {
        "model": entry.wire_model,
        "messages": _Writer(messages, options, caps, entry.id).wire_messages(),
    }
    losses = Losses(NAME, options.session_id)
    losses.cache_points(messages, "Ollama has no per-block cache marker; it keeps its own KV cache")
    losses.citations(messages, "an Ollama message carries plain text only")
    FACTS.tools_to_wire(body, _tools(tools, options, caps, entry.id), options.tool_choice)
    directives, fields = split_directives(options, NAME)
    if options.stream is False or directives.get(STREAM_SENT, True):
        body["stream"] = options.stream  # a recorded request that streamed by default: as sent
    FACTS.options_to_wire(
        {
            "max_tokens": options.max_tokens,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "stop": options.stop,
            "reasoning_effort": options.reasoning_effort,  # no field (think levels: provider-only)
        },
        body,
        session_id=options.session_id,
        spelled=directives.get(OPTION_PATHS),
    )
    FACTS.output_schema_to_wire(options.output_schema, body)
    think = _think(options, caps, entry.id)
    if think is not None:
        body["think"] = think
    merge(body, fields)
    return body


def wire_tool(tool: ToolDefinition) -> dict[str, Any]:
    """The function tool, its schema's references inlined: Ollama decodes `parameters` into a
    fixed struct that resolves none (see `adapters._kit.tool_schema`)."""
    wire = function_tool(tool)
    if uses_refs(tool.input_schema):
        wire["function"]["parameters"] = inline_refs(tool.input_schema, tool=tool.name, provider=NAME)
    return wire


def _tools(
    tools: Sequence[ToolDefinition], options: AdapterOptions, caps: AdapterCapabilities, model: str
) -> list[dict[str, Any]]:
    """Function tools; none for tool choice "none" or a model the catalog says has no tools
    (the server would answer 400 "does not support tools"). Any other choice than "auto"
    cannot be said to Ollama: the tools go, the choice is logged and left to the model."""
    meaning = tool_choice_meaning(options.tool_choice)
    if not tools or (meaning is not None and meaning[0] == ToolChoice.none):
        return []
    if not caps.supports_tools:
        Losses(NAME, options.session_id).request(
            "tools", f"model {model} does not support tools; {len(tools)} tool(s) not sent"
        )
        return []
    if meaning is not None and meaning[0] != ToolChoice.auto:  # FACTS.tool_choice is empty: no wire field
        Losses(NAME, options.session_id).request(
            "tool_choice",
            f"Ollama has no tool_choice; {options.tool_choice!r} not sent (the model chooses)",
        )
    warn_deferred(row_of(NAME), tools, session_id=options.session_id)
    warn_kept(NAME, tools, session_id=options.session_id)
    functions = [wire_tool(tool) for tool in tools if not is_provider_tool(tool)]
    # Ollama runs no tool itself: a provider tool is dropped with the WARN (`provider_tools`).
    return functions + write_tools(row_of(NAME), tools, session_id=options.session_id)


def _think(options: AdapterOptions, caps: AdapterCapabilities, model: str) -> bool | None:
    """`think` from thinking_budget: Ollama takes on/off (a level goes through `extra`), not a
    budget. Not sent to a model without thinking: `think: true` there is a 400."""
    if options.thinking_budget is None:
        return None
    wanted = options.thinking_budget > 0
    if not caps.supports_thinking:
        if wanted:
            Losses(NAME, options.session_id).request(
                "thinking_budget", f"model {model} does not support thinking; think not sent"
            )
        return None
    return wanted


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """Canonical tool id -> tool name over the whole history (the last call with an id wins)."""
    return {
        block.id: block.name for message in messages for block in message.content if block.type == "tool_use"
    }


class _Writer:
    """Serializes one request's messages; knows the history (tool names) and the target model."""

    def __init__(
        self, messages: Sequence[Message], options: AdapterOptions, caps: AdapterCapabilities, model: str
    ):
        self.messages = messages
        self.options = options
        self.caps = caps
        self.model = model
        self.tool_names = _tool_names(messages)
        self.shapes = spelled(options, NAME)
        """Message id -> how an import found it sent (`SPELLED`: `IMAGES_SENT_TO`, ...)."""
        self.own_ids = options.tool_ids.issued_by(NAME)
        self.losses = Losses(NAME, options.session_id)

    def shape(self, message: Message) -> dict[str, Any]:
        """How an import found `message` sent ({} for any other message)."""
        found = self.shapes.get(message.id)
        return found if isinstance(found, dict) else {}

    def wire_messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for message in self.messages:
            if message.role == Role.tool:
                out.append(self._tool_message(message))
            elif message.content or message.role != Role.system:
                out.append(self._message(message))
            # else: an empty system message is a composition placeholder (spec §5.1.2)
        return out

    def _message(self, message: Message) -> dict[str, Any]:
        """A system, user or assistant message."""
        text: list[str] = []
        thinking: list[str] = []
        images: list[str] = []
        calls: list[dict[str, Any]] = []
        indexes: Mapping[str, Any] | None = None  # read once, at the first call: most messages have none
        # Blocks are told apart by their `type` tag: a string compare, where an isinstance
        # check against a pydantic model class goes through ABCMeta on every block.
        for index, block in enumerate(message.content):
            if block.type == "text":
                text.append(block.text)
            elif block.type == "tool_use":
                if indexes is None:
                    indexes = own_raw(message, NAME).get("tool_call_index") or {}
                calls.append(self._tool_call(block, indexes))
            elif block.type == "thinking":
                if (kept := self._thinking(message, index, block)) is not None:
                    thinking.append(kept)
            elif block.type == "image":
                if (b64 := self._image(message, index, block, at=len(images))) is not None:
                    images.append(b64)
            elif block.type == "redacted_thinking":
                self.losses.block(
                    message, index, block.type, "Ollama cannot carry another provider's redacted thinking"
                )
            else:
                self.losses.block(
                    message,
                    index,
                    block.type,
                    f"a {block.type} block cannot appear in a {message.role} message",
                )
        wire: dict[str, Any] = {"role": ROLE_TO_WIRE[message.role], "content": TEXT_JOIN.join(text)}
        if thinking:
            wire["thinking"] = TEXT_JOIN.join(thinking)
        if images:
            wire["images"] = images
        if calls:
            wire["tool_calls"] = calls
        return wire

    def _thinking(self, message: Message, index: int, block: ThinkingBlock) -> str | None:
        """Unsigned thinking replays as text; a signature means another provider's reasoning."""
        if block.signature is not None:
            self.losses.block(
                message, index, block.type, "thinking signed by another provider is not replayable to Ollama"
            )
            return None
        if not self.caps.supports_thinking:
            self.losses.block(message, index, block.type, f"model {self.model} does not support thinking")
            return None
        return block.text or None

    def _image(
        self, message: Message, index: int, block: ImageBlock, where: str = "", *, at: int = 0
    ) -> str | None:
        """Raw base64 for `images` (a data URL where the import found one at position `at`),
        or None when the block was dropped."""
        block_type = f"{block.type}{where}"
        kept = self.shape(message)
        refused = admit(block, self.caps, self.model, FACTS)  # every file id: Ollama reads none
        sent_here = kept.get(IMAGES_SENT_TO) in (self.model, self.options.model)
        if refused is not None and sent_here and block.source.kind == MediaSourceKind.base64:
            refused = None  # the request sent it to this very model: it goes as it went
        if refused is not None:
            self.losses.block(message, index, block_type, refused)
            return None
        if block.source.kind != MediaSourceKind.url:
            data = image_base64(block, self.options)
            if data is not None and at in (kept.get(DATA_URL_IMAGES) or ()):
                return data_url(block.media_type, data)
            return data
        parsed = parse_data_url(block.source.data)
        if parsed is not None:
            return parsed[1]
        if not self.options.allow_url_fetch:
            self.losses.block(
                message, index, block_type, "Ollama takes no image URLs and URL fetching is disabled"
            )
            return None
        fetcher = self.options.url_fetcher or UrlFetcher(max_bytes=self.options.max_media_bytes)
        return _fetch(fetcher, block.source.data, message, index)

    def _tool_call(self, block: ToolUseBlock, indexes: Mapping[str, Any]) -> dict[str, Any]:
        """`indexes`: the message's own provider_raw `tool_call_index` (Ollama's own calls only)."""
        function: dict[str, Any] = {"name": block.name, "arguments": block.input}
        index = indexes.get(block.id)
        if isinstance(index, int) and not isinstance(index, bool):
            function["index"] = index
        provider_id = self.own_ids.get(block.id)
        return {"id": provider_id, "function": function} if provider_id else {"function": function}

    def _tool_message(self, message: Message) -> dict[str, Any]:
        block = message.content[0]
        if not isinstance(block, ToolResultBlock):  # the schema makes this unreachable
            raise AdapterError(
                "a TOOL message must hold one tool_result block", provider=NAME, message_id=message.id
            )
        texts: list[str] = []
        images: list[str] = []
        for part in block.content:
            if isinstance(part, TextBlock):
                texts.append(part.text)
            elif isinstance(part, ImageBlock):
                if (b64 := self._image(message, 0, part, " in tool_result", at=len(images))) is not None:
                    images.append(b64)
            else:
                self.losses.block(
                    message,
                    0,
                    f"{part.type} in tool_result",
                    "an Ollama tool message carries text and images only",
                )
        if block.is_error:
            self.losses.lost(
                message,
                "tool_result.is_error",
                "Ollama tool messages have no error flag; the text is sent as is",
            )
        wire: dict[str, Any] = {"role": "tool", "content": TEXT_JOIN.join(texts)}
        if images:
            wire["images"] = images
        name = self.tool_names.get(block.tool_use_id)
        if self.shape(message).get(UNNAMED_RESULT):
            return wire  # imported without one (the server pairs it by order), sent so again
        if name is None:
            self.losses.lost(
                message,
                "tool_result.tool_name",
                f"no tool_use {block.tool_use_id} in the history; sent without tool_name",
            )
        else:
            wire["tool_name"] = name
        return wire


def _fetch(fetcher: Callable[[str], bytes], url: str, message: Message, index: int) -> str:
    try:
        data = fetcher(url)
    except MetisError:
        raise
    except Exception as exc:
        raise AdapterError(
            f"could not fetch image {url!r}: {exc}",
            provider=NAME,
            message_id=message.id,
            path=f"content[{index}]",
        ) from exc
    return base64.b64encode(data).decode("ascii")


__all__ = [
    "DATA_URL_IMAGES",
    "IMAGES_SENT_TO",
    "ROLE_TO_WIRE",
    "STREAM_SENT",
    "TEXT_JOIN",
    "UNNAMED_RESULT",
    "wire_tool",
    "write_request",
]
