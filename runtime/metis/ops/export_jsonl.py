"""`metis export --format jsonl-messages`: conversations as chat-message datasets.

One line per conversation, `{"messages": [...]}`, in the conversational layout Hugging
Face TRL trainers read (and chat templates render): OpenAI-style `system` / `user` /
`assistant` / `tool` messages, an assistant's calls under `tool_calls` as
`{"id", "type": "function", "function": {"name", "arguments"}}` with `arguments` the
input as a JSON string, as OpenAI sends it (which also keeps a dataset column one type
whatever each tool's inputs are), and a tool's answer as
`{"role": "tool", "tool_call_id", "content"}` — every key one the OpenAI SDK declares.

What goes in is the conversation as it happened: a cancelled or failed assistant turn is
left out (as from every request), and so is a compaction, whose covered turns stay in —
compaction shrinks what a model is sent, not the record a dataset learns from. Thinking
blocks are left out too (training data for visible turns; their signatures mean nothing
to another model); images become
`image_url` content parts, so a message with one has a list as its content. A block
with no chat-message form (audio, video, a document, a workspace or provider-hosted
file) is an ExportError naming the message, never silently left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    MessageStatus,
    Role,
    SearchResultBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from .. import _json
from ..errors import MetisError
from .compact import covered_through

ChatMessage = dict[str, Any]


class ExportError(MetisError):
    """A message cannot be written in the export format asked for."""


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


def _arguments(block: ToolUseBlock) -> str:
    return _json.dumps(block.input).decode()


def in_conversation(message: Message) -> bool:
    """Whether the message is one of the finished turns a dataset keeps (see module doc)."""
    return message.role != Role.assistant or (
        message.metadata.status == MessageStatus.complete and covered_through(message) is None
    )


def conversation(history: Iterable[Message]) -> list[Message]:
    """The finished turns of `history`, compactions left out (see module doc)."""
    return [m for m in history if in_conversation(m)]


def chat_entries(message: Message) -> list[ChatMessage]:
    """The OpenAI-style chat messages of one message of the conversation (a TOOL message
    gives one per result; see module doc)."""
    if message.role == Role.assistant:
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        entry: ChatMessage = {"role": "assistant", "content": text}
        calls = [
            {"id": b.id, "type": "function", "function": {"name": b.name, "arguments": _arguments(b)}}
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        if calls:
            entry["tool_calls"] = calls
        return [entry]
    if message.role == Role.tool:
        return [
            {"role": "tool", "tool_call_id": b.tool_use_id, "content": _content(b.content, message)}
            for b in message.content
            if isinstance(b, ToolResultBlock)
        ]
    return [{"role": message.role.value, "content": _content(message.content, message)}]


def chat_messages(history: Iterable[Message]) -> list[ChatMessage]:
    """The conversation as OpenAI-style chat messages (see module doc)."""
    return [entry for message in history if in_conversation(message) for entry in chat_entries(message)]


def dataset_line(history: Iterable[Message]) -> dict[str, Any]:
    """One dataset row: `{"messages": [...]}`."""
    return {"messages": chat_messages(history)}


def dataset_line_text(history: Iterable[Message]) -> Iterator[bytes]:
    """`dataset_line` as the JSON text `metis export` writes (orjson's, compact), made a
    message at a time: the row of a long session is written while the session is read a
    page at a time, never held whole."""
    yield b'{"messages":['
    first = True
    for message in history:
        if not in_conversation(message):
            continue
        for entry in chat_entries(message):
            yield _json.dumps(entry) if first else b"," + _json.dumps(entry)
            first = False
    yield b"]}"


__all__ = [
    "ChatMessage",
    "ExportError",
    "chat_entries",
    "chat_messages",
    "conversation",
    "dataset_line",
    "dataset_line_text",
    "in_conversation",
]
