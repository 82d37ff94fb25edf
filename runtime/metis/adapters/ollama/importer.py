"""A recorded `/api/chat` request body -> canonical messages, tools and options (`WireImport`).

The body is checked once against `wire.ChatRequest`; what follows only maps. Tool results
name no call: each pairs with the earliest unanswered call of the preceding assistant turn
that has its `tool_name` (or simply the earliest, when the client sent no name, as many
do). Canonical options (the sampling ones under `options`, a `format` that is a JSON
Schema) are taken out of the top-level option fields (`options`); what they leave
(`keep_alive`, `think`, `format: "json"`, `options.num_ctx`, ...) is Ollama's own,
`options.provider_options["ollama"]`, replayed to Ollama alone; so is a top-level field
that is no Ollama request field (a lax client's `temperature` beside `options`: the server
ignores it, and the replay sends it as it was sent). A message field a role cannot carry is
listed in `dropped`. Images a message sent keep how they were sent (`_sent_images`), a tool
result sent without `tool_name` that it had none, by message id in the `SPELLED` directive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from pydantic import ValidationError

from ...assembly import RequestContext, import_context, imported_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from ...validation import pydantic_problems
from .._kit.base import AdapterOptions, WireImport
from .._kit.importing import ImportedMessages, import_model, imported_tool
from .._kit.losses import Losses, wire_message
from .._kit.options import imported_options, option_fields
from .._kit.reader import read
from .facts import FACTS, NAME
from .from_wire import Raw, reply_content
from .to_wire import DATA_URL_IMAGES, IMAGES_SENT_TO, STREAM_SENT, UNNAMED_RESULT
from .wire import ChatRequest, Image, RequestMessage, RequestTool

_WIRE_TO_ROLE: dict[str, Role] = {
    "system": Role.system,
    "user": Role.user,
    "assistant": Role.assistant,
    "tool": Role.tool,
}

_CONTENT: frozenset[str] = frozenset({"messages", "tools"})
"""Top-level request fields the import maps as content; every other one is an option."""

_ROLE_KEYS: dict[Role, frozenset[str]] = {
    Role.system: frozenset({"role", "content"}),
    Role.user: frozenset({"role", "content", "images"}),
    Role.assistant: frozenset({"role", "content", "thinking", "tool_calls"}),
    Role.tool: frozenset({"role", "content", "tool_name", "images"}),
}
"""The message fields the import reads for each role; any other one is dropped and listed."""
_MESSAGE_KEYS: frozenset[str] = frozenset().union(*_ROLE_KEYS.values())
"""The message fields the import reads for some role."""
_TOOL_KEYS = frozenset({"type", "function"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})


def _now() -> datetime:
    """Creation time of imported messages (a function, so tests can pin it)."""
    return datetime.now(UTC)


def _fail(message: str, path: str) -> WireFormatError:
    return WireFormatError(message, provider=NAME, path=path)


def import_request(body: Any, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
    """A recorded /api/chat body -> canonical messages, tools and options."""
    request = read(ChatRequest, body, provider=NAME, what="request")
    importer = _Importer(request, body["messages"] if request.get("messages") else [], session_id, tool_ids)
    importer.read_messages()
    tools = importer.tools()
    return WireImport(
        messages=importer.imported.messages,
        tools=tools,
        options=importer.options(),
        dropped=importer.losses.dropped,
        paths=importer.imported.paths,
    )


def _image_block(image: Image, path: str, session_id: str) -> ImageBlock:
    media_type = image.media_type
    if media_type is None:
        reason = f"image at {path} has an unknown format; recorded as image/png"
        Losses(NAME, session_id).lost(wire_message(path), "image", reason)  # the message being made
        media_type = "image/png"
    return ImageBlock(
        type="image", source=MediaSource(kind=MediaSourceKind.base64, data=image.data), media_type=media_type
    )


class _Importer:
    """Reads one checked request body; pairs tool results with tool calls by name and order."""

    def __init__(
        self, request: ChatRequest, sent: list[dict[str, Any]], session_id: str, tool_ids: ToolIdMap
    ) -> None:
        self.request = request
        self.sent = sent  # the messages as recorded: what a drop lists (an image as its string)
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.model = import_model(request, NAME)
        self.pending: list[tuple[str, str]] = []  # unanswered (canonical id, name) of the last assistant turn
        # What the import cannot carry, kept for the caller in `WireImport.dropped`:
        # nothing is dropped without a trace.
        self.losses = Losses(NAME, session_id)
        self.imported = ImportedMessages(session_id, NAME)
        """The messages read, with their paths and how they were sent (`SPELLED`)."""

    def read_messages(self) -> None:
        """Each message of the request, read from `messages[i]` (one canonical message each)."""
        for i, m in enumerate(self.request.get("messages") or ()):
            path = f"messages[{i}]"
            self.imported.add(self._message(m, self.sent[i], path), path)

    def _message(self, wire: RequestMessage, sent: dict[str, Any], path: str) -> Message:
        role = _WIRE_TO_ROLE[wire["role"]]
        carried = _ROLE_KEYS[role]
        for key in sorted(set(sent) - carried):
            value = sent[key]
            if key not in _MESSAGE_KEYS:
                self.losses.imported(f"{path}.{key}", value, "not an Ollama message field metis knows")
            elif value not in (None, "", [], {}):  # an empty field loses nothing
                self.losses.imported(
                    f"{path}.{key}", value, f"{role.value.upper()} messages do not carry {key}"
                )
        try:
            if role == Role.assistant:
                return self._assistant(wire)
            if role == Role.tool:
                return self._tool(wire, sent, path)
            return self._plain(role, wire, sent, path)
        except ValidationError as exc:
            raise _fail(f"not a valid canonical message: {pydantic_problems(exc)[0]}", path) from exc

    def _images(self, wire: RequestMessage, path: str) -> list[ContentBlock]:
        return [
            _image_block(image, f"{path}.images[{i}]", self.session_id)
            for i, image in enumerate(wire.get("images") or ())
        ]

    def _sent_images(self, message: dict[str, Any]) -> dict[str, Any]:
        """How a message sent images (none for one that sent none), read from the message as
        recorded (`sent`: the checked one holds them decoded): the model they went to
        (`IMAGES_SENT_TO`: written back to that model, they go again, whatever the catalog
        says it takes) and which came as data URLs (`DATA_URL_IMAGES`: written so again)."""
        sent = message.get("images")
        if not isinstance(sent, list) or not sent:
            return {}
        shape: dict[str, Any] = {IMAGES_SENT_TO: self.model}
        urls = [k for k, image in enumerate(sent) if isinstance(image, str) and image.startswith("data:")]
        if urls:
            shape[DATA_URL_IMAGES] = urls
        return shape

    def _plain(self, role: Role, wire: RequestMessage, sent: dict[str, Any], path: str) -> Message:
        text = wire.get("content") or ""
        content: list[ContentBlock] = [TextBlock(type="text", text=text)] if text else []
        if role == Role.user:
            content.extend(self._images(wire, path))
            content = content or [TextBlock(type="text", text="")]
            return self.imported.new(role, content, path, self._sent_images(sent), created_at=_now())
        return self.imported.new(role, content, path, created_at=_now())

    @cached_property
    def _context(self) -> RequestContext:
        """The import's assistant-turn context, built at the first assistant turn."""
        return import_context(
            provider=NAME, session_id=self.session_id, model=self.model, tool_ids=self.tool_ids
        )

    def _assistant(self, wire: RequestMessage) -> Message:
        context = replace(self._context, created_at=_now())  # each imported message its own time
        raw = Raw()
        content = reply_content(wire, context, raw)
        self.pending = [(block.id, block.name) for block in content if type(block) is ToolUseBlock]
        raw_dict = raw.as_dict()
        return imported_assistant(
            context, provider=NAME, content=content, provider_raw=raw_dict if len(raw_dict) > 1 else None
        )

    def _tool(self, wire: RequestMessage, sent: dict[str, Any], path: str) -> Message:
        canonical = self._pair(wire.get("tool_name") or None, path)
        text = wire.get("content") or ""
        images = self._images(wire, path)
        inner: list[ContentBlock] = [TextBlock(type="text", text=text)] if text or not images else []
        inner.extend(images)
        result = ToolResultBlock(type="tool_result", tool_use_id=canonical, content=inner, is_error=False)
        shape = self._sent_images(sent) | ({} if wire.get("tool_name") else {UNNAMED_RESULT: True})
        return self.imported.new(
            Role.tool, [result], path, shape, created_at=_now(), parent_tool_use_id=canonical
        )

    def _pair(self, name: str | None, path: str) -> str:
        """The earliest unanswered call of the preceding assistant turn (with that name, if named)."""
        for position, (canonical, call_name) in enumerate(self.pending):
            if name is None or call_name == name:
                del self.pending[position]
                return canonical
        wanted = f"named {name!r} " if name else ""
        raise _fail(
            f"tool result answers no unanswered tool call {wanted}of the preceding assistant turn", path
        )

    def tools(self) -> list[ToolDefinition]:
        return [
            self._tool_definition(tool, f"tools[{i}]")
            for i, tool in enumerate(self.request.get("tools") or ())
        ]

    def _tool_definition(self, tool: RequestTool, path: str) -> ToolDefinition:
        function = tool["function"]
        fields: Mapping[str, Any] = tool
        for key in sorted(set(fields) - _TOOL_KEYS):
            self.losses.imported(f"{path}.{key}", fields[key], "not part of a canonical tool definition")
        function_fields: Mapping[str, Any] = function
        for key in sorted(set(function_fields) - _FUNCTION_KEYS):
            self.losses.imported(
                f"{path}.function.{key}",
                function_fields[key],
                "not part of a canonical tool definition",
            )
        return imported_tool(
            function["name"],
            function.get("description"),
            function.get("parameters"),
            provider=NAME,
            path=f"{path}.function",
        )

    def options(self) -> AdapterOptions:
        """Canonical options taken out of the option fields by the one rule
        (`options.imported_options`); the rest is Ollama's own."""
        request = self.request
        directives = self.imported.spelling()
        if "stream" not in request:
            directives[STREAM_SENT] = False
        return imported_options(
            request,
            option_fields(request, _CONTENT),
            FACTS,
            model=self.model,
            session_id=self.session_id,
            tool_ids=self.tool_ids,
            directives=directives,
            stream=request.get("stream", True),  # the REST API streams unless told otherwise
        )


__all__ = ["import_request"]
