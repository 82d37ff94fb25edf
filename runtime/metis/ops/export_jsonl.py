"""`metis export --format jsonl-messages | trl`: conversations as chat-message datasets.

One line per conversation, `{"messages": [...], "tools": [...]}`, in the layout the dataset
tool named reads. Both are OpenAI-style `system` / `user` / `assistant` / `tool` messages, an
assistant's calls under `tool_calls` as `{"id", "type": "function", "function": {"name",
"arguments"}}`, and a `tools` column of the tools the session offered, in OpenAI's function
form `{"type": "function", "function": {"name", "description", "parameters"}}` (the union of
every tool set the session recorded, the latest definition of each name: a call made under an
earlier set is still explained). They differ where the tools differ (`Layout`, one row each):

- `jsonl-messages`, OpenAI's fine-tuning chat format: `arguments` is the input as a JSON
  string, as OpenAI sends it; a tool's answer is `{"role": "tool", "tool_call_id",
  "content"}`; every key one the OpenAI SDK declares. The format has no reasoning field.
- `trl`, Hugging Face TRL's conversational layout with tool calling (its "Dataset formats"
  guide): `arguments` is the input object, as chat templates read it; a tool's answer also
  names the function it answers (`name`); reasoning text goes under the assistant
  message's `thinking`, the key TRL's reasoning templates read.

What goes in is the conversation as it happened: a cancelled or failed assistant turn is
left out (as from every request), and so is a compaction, whose covered turns stay in —
compaction shrinks what a model is sent, not the record a dataset learns from. Opaque
reasoning (signatures, redacted thinking) is never written: it means nothing to another
model. Images become `image_url` content parts, so a message with one has a list as its
content. A block with no chat-message form (audio, video, a document, a workspace or
provider-hosted file) is an ExportError naming the message, never silently left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    MessageStatus,
    Role,
    SearchResultBlock,
    SettingsRevision,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolKind,
    ToolResultBlock,
    ToolUseBlock,
)

from .. import _json
from ..errors import MetisError
from .compact import covered_through

ChatMessage = dict[str, Any]


class ExportError(MetisError):
    """A message cannot be written in the export format asked for."""


@dataclass(frozen=True)
class Layout:
    """What one dataset tool reads differently (see module doc): one row per tool, read by
    the one writer below."""

    name: str
    arguments_as_text: bool
    """A tool call's arguments as JSON text (OpenAI fine-tuning), else as the object (TRL)."""
    tool_names: bool
    """A tool message names the function it answers (TRL's `name`)."""
    reasoning: str | None
    """The assistant message's key for reasoning text (TRL's `thinking`); None: not written."""


OPENAI = Layout("jsonl-messages", arguments_as_text=True, tool_names=False, reasoning=None)
TRL = Layout("trl", arguments_as_text=False, tool_names=True, reasoning="thinking")
LAYOUTS = {layout.name: layout for layout in (OPENAI, TRL)}
"""The dataset layouts by their `metis export --format` name."""


def _image_url(block: ImageBlock, message: Message) -> dict[str, Any]:
    source = block.source
    if source.kind == MediaSourceKind.base64:
        url = f"data:{block.media_type};base64,{source.data}"
    elif source.kind == MediaSourceKind.url:
        url = source.data
    else:
        raise ExportError(
            f"image {source.data!r} is a {source.kind.value}, which a dataset line cannot carry",
            message_id=message.id,
            path="content",
        )
    return {"type": "image_url", "image_url": {"url": url}}


def _part(block: ContentBlock, message: Message) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return _image_url(block, message)
    if isinstance(block, SearchResultBlock):
        return {"type": "text", "text": "\n".join(b.text for b in block.content)}
    raise ExportError(
        f"a {block.type} block has no chat-message form; export the session as otel instead",
        message_id=message.id,
        path="content",
    )


def _content(blocks: Sequence[ContentBlock], message: Message) -> str | list[dict[str, Any]]:
    """Text as one string; anything else as OpenAI content parts."""
    if all(isinstance(b, TextBlock) for b in blocks):
        return "".join(b.text for b in blocks if isinstance(b, TextBlock))
    return [_part(b, message) for b in blocks]


def _arguments(block: ToolUseBlock, layout: Layout) -> Any:
    return _json.dumps(block.input).decode() if layout.arguments_as_text else block.input


def in_conversation(message: Message) -> bool:
    """Whether the message is one of the finished turns a dataset keeps (see module doc)."""
    return message.role != Role.assistant or (
        message.metadata.status == MessageStatus.complete and covered_through(message) is None
    )


def conversation(history: Iterable[Message]) -> list[Message]:
    """The finished turns of `history`, compactions left out (see module doc)."""
    return [m for m in history if in_conversation(m)]


def _remember_calls(message: Message, names: dict[str, str]) -> None:
    """Note the function name of each call `message` makes, for the tool messages that answer
    it (every assistant turn's, kept or not: an answer is named whatever became of its turn)."""
    if message.role == Role.assistant:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name


def chat_entries(
    message: Message, layout: Layout = OPENAI, names: dict[str, str] | None = None
) -> list[ChatMessage]:
    """The chat messages of one message of the conversation in `layout` (a TOOL message gives
    one per result; see module doc). `names`: the function name of each call made earlier,
    by canonical tool id, for the layouts whose tool messages name it."""
    if message.role == Role.assistant:
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        entry: ChatMessage = {"role": "assistant", "content": text}
        calls = [
            {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": _arguments(b, layout)}}
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        if calls:
            entry["tool_calls"] = calls
        reasoning = "".join(b.text for b in message.content if isinstance(b, ThinkingBlock))
        if layout.reasoning is not None and reasoning:
            entry[layout.reasoning] = reasoning
        return [entry]
    if message.role == Role.tool:
        entries = []
        for b in message.content:
            if not isinstance(b, ToolResultBlock):
                continue
            entry = {"role": "tool", "tool_call_id": b.tool_use_id, "content": _content(b.content, message)}
            if layout.tool_names:
                name = (names or {}).get(b.tool_use_id)
                if name is None:
                    raise ExportError(
                        f"tool result for {b.tool_use_id} answers no call of the conversation before it",
                        message_id=message.id,
                        path="content",
                    )
                entry["name"] = name
            entries.append(entry)
        return entries
    return [{"role": message.role.value, "content": _content(message.content, message)}]


def _entries(history: Iterable[Message], layout: Layout) -> Iterator[ChatMessage]:
    names: dict[str, str] = {}
    for message in history:
        _remember_calls(message, names)
        if in_conversation(message):
            yield from chat_entries(message, layout, names)


def chat_messages(history: Iterable[Message], layout: Layout = OPENAI) -> list[ChatMessage]:
    """The conversation as chat messages in `layout` (see module doc)."""
    return list(_entries(history, layout))


def session_tools(revisions: Iterable[SettingsRevision]) -> list[ToolDefinition]:
    """Every tool a session offered over its settings revisions: the latest definition of each
    name, in the order the names first appeared."""
    tools: dict[str, ToolDefinition] = {}
    for revision in revisions:
        for tool in revision.tools:
            tools[tool.name] = tool
    return list(tools.values())


def tools_column(tools: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """The `tools` column: each function tool in OpenAI's function form (what both layouts
    read). A tool the provider ran itself (web search...) has no function form and is no
    tool a fine-tuned model calls: it is left out (its calls are not in the messages either)."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
        }
        for t in tools
        if t.kind in (None, ToolKind.function)
    ]


def dataset_line(
    history: Iterable[Message], tools: Sequence[ToolDefinition] = (), layout: Layout = OPENAI
) -> dict[str, Any]:
    """One dataset row: `{"messages": [...]}`, and `"tools": [...]` when the session had any."""
    line: dict[str, Any] = {"messages": chat_messages(history, layout)}
    if tools:
        line["tools"] = tools_column(tools)
    return line


def dataset_line_text(
    history: Iterable[Message], tools: Sequence[ToolDefinition] = (), layout: Layout = OPENAI
) -> Iterator[bytes]:
    """`dataset_line` as the JSON text `metis export` writes (orjson's, compact), made a
    message at a time: the row of a long session is written while the session is read a
    page at a time, never held whole."""
    yield b'{"messages":['
    first = True
    for entry in _entries(history, layout):
        yield _json.dumps(entry) if first else b"," + _json.dumps(entry)
        first = False
    yield b"]"
    if tools:
        yield b',"tools":' + _json.dumps(tools_column(tools))
    yield b"}"


__all__ = [
    "LAYOUTS",
    "OPENAI",
    "TRL",
    "ChatMessage",
    "ExportError",
    "Layout",
    "chat_entries",
    "chat_messages",
    "conversation",
    "dataset_line",
    "dataset_line_text",
    "in_conversation",
    "session_tools",
    "tools_column",
]
