"""A recorded Responses API request -> canonical messages, tools and options (the importer).

The body is read once through the declared `Request` shape. `input` as a string is one
USER message; as items: message items by role (`instructions` becomes the leading SYSTEM
message, replayed as `instructions` through the directive of that name), a run of
assistant-side items (assistant messages, reasoning, function calls) one ASSISTANT
message read by the reply's own item reader (so reasoning items are kept and replay to
the same model), each `function_call_output` a TOOL message linked by `call_id`.

Compaction items and the provider's own tool items join the assistant run (v2 compaction,
and server_tool_use blocks each followed by the server_tool_result of what the item
returned, as in a reply; MCP listings and approvals and tool searches likewise). An
`additional_tools` item's tools are tools of the request, marked with where the item
stood (`offered_tools`), so it goes back to this provider as it came. Not carried, each
dropped with a WARN and listed in `WireImport.dropped`: `item_reference` items (the item
lives on the server; kept verbatim by the id of the message after it, the `ITEMS_BEFORE`
directive, and replayed there to this provider alone), and items with no block. How a
message item was spelled (a string `input`, no `type`, string `content`) is kept by
message id in the `SPELLED` directive, so the replay spells it so again (`to_wire`).
`input_audio` parts become v2 audio, and an image given by `file_id` an image by this
provider's file id.
`input_file` parts become v2 documents (a file id as this provider's; a media type not
given is guessed from the name, else taken as PDF).
Canonical options are taken out of the top-level option fields by the facts row
(structured output from `text.format`); the rest, with the directives (`instructions`),
is this provider's own entry of `options.provider_options`, replayed to it alone.
`previous_response_id` is among them (replayed as sent to this provider), and it is
*named* in the record: the first message of `input` carries `metadata.continues`
(a `Continuation`: provider, response id), and so does each TOOL message whose
`function_call_output` answers a call made in that earlier response — its call id is
registered in the session's ToolIdMap, so the provider id stays resolvable for the
replay. Nothing of that history is invented here; the client resolves it from the store
when it must be written out (`metis.continuation`). Without `previous_response_id`, an
output answering no earlier call is refused. A function tool's `strict` is `ToolDefinition.strict`, its
literal kept when the boolean would not write it back (`strict`); built-in tools
(`web_search`, `code_interpreter`, `mcp`, ...) are canonical provider tools, in order
(`provider_tools`).
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Callable
from typing import Any, TypeVar, cast

from metis_schema.v3 import (
    AudioBlock,
    ContentBlock,
    Continuation,
    DocumentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
)
from pydantic import ValidationError

from ...assembly import import_context, imported_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from .._kit.base import AdapterOptions, WireImport
from .._kit.facts import ProviderFacts
from .._kit.images import parse_data_url, url_image_media_type
from .._kit.importing import ImportedMessages, import_model, imported_tool, system_role
from .._kit.losses import Losses
from .._kit.options import imported_options, option_fields
from .._kit.provider_tools import ROWS, read_tool
from .._kit.reader import read
from .._kit.strict import read_strict
from .._kit.tool_fields import with_provider_data
from ..chat.from_wire import not_canonical
from .facts import AUDIO_FORMATS, PROVIDER, SERVER_TOOL_CALLS, SERVER_TOOL_ITEMS
from .from_wire import ItemRead, read_items
from .to_wire import INPUT_STRING, ITEMS_BEFORE, STRING_CONTENT, TYPELESS
from .wire import FunctionCallOutputItem, InputAudio, Item, MessageItem, Part, Request, Tool

_B = TypeVar("_B", ImageBlock, AudioBlock)

log = logging.getLogger("metis.adapters")

_BODY_KEYS = frozenset({"model", "input", "instructions", "tools"})
_ASSISTANT_SIDE = (
    frozenset({"reasoning", "function_call", "compaction"}) | SERVER_TOOL_CALLS | SERVER_TOOL_ITEMS
)


def import_request(facts: ProviderFacts, body: Any, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
    """A recorded request body -> canonical messages, tools and options (see module doc)."""
    request = read(Request, body, provider=PROVIDER, what="request")
    return _Importer(facts, session_id, tool_ids, import_model(request, PROVIDER)).read(request)


def continuation(request: Request) -> Continuation | None:
    """The response a request continues (`previous_response_id`), named; None: none."""
    previous = request.get("previous_response_id")
    if not previous:
        return None
    try:
        return Continuation(provider=PROVIDER, response_id=previous)
    except ValidationError as exc:
        raise not_canonical(exc, provider=PROVIDER, path="previous_response_id") from None


class _Importer:
    def __init__(self, facts: ProviderFacts, session_id: str, tool_ids: ToolIdMap, model_id: str) -> None:
        self.facts = facts
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.model_id = model_id
        self.context = import_context(
            provider=PROVIDER, session_id=session_id, model=model_id, tool_ids=tool_ids
        )
        self.losses = Losses(PROVIDER, session_id)
        self.imported = ImportedMessages(session_id, PROVIDER)
        """The messages read, with their paths and how each item was spelled (`SPELLED`)."""
        self.system_roles: list[str] = []
        self.pending: list[Item] = []
        self.pending_at = 0
        self.continues: Continuation | None = None
        self.references: list[dict[str, Any]] = []
        """`item_reference` items waiting for the message after them (`ITEMS_BEFORE`)."""
        self.before: dict[str, list[dict[str, Any]]] = {}
        """Message id -> the item references that stood before it: the `ITEMS_BEFORE` directive."""
        self.offered: list[tuple[dict[str, Any], str, int]] = []
        """`additional_tools` items: (item, path, index of the message they stand before)."""

    def read(self, request: Request) -> WireImport:
        directives: dict[str, Any] = {}
        self.continues = continuation(request)
        instructions = request.get("instructions")
        if instructions is not None:
            self.imported.add(
                self.new(Role.system, [TextBlock(type="text", text=instructions)], "instructions"),
                "instructions",
            )
            directives["instructions"] = True
        wire_input = request.get("input")
        if isinstance(wire_input, str):
            text: list[ContentBlock] = [TextBlock(type="text", text=wire_input)]
            self.imported.add(self.new(Role.user, text, "input", {INPUT_STRING: True}), "input")
            self.mark_continued(len(self.imported.messages) - 1)
        else:
            first = len(self.imported.messages)
            for i, item in enumerate(wire_input or ()):
                self.item(item, f"input[{i}]", i)
            self.flush()
            self.mark_continued(first)
        tools = self.tools(request.get("tools") or [], directives)
        tools += self.offered_tools({t.name for t in tools})
        directives.update(system_role(self.system_roles, self.losses))
        directives.update(self.imported.spelling())
        if self.before:
            directives[ITEMS_BEFORE] = self.before
        if "store" not in request or "include" not in request:
            directives["stateless"] = False  # the writer adds neither on replay (`to_wire`)
        return WireImport(
            messages=self.imported.messages,
            tools=tools,
            options=self.options(request, directives),
            dropped=self.losses.dropped,
            paths=self.imported.paths,
        )

    # --- options --------------------------------------------------------------------

    def options(self, request: Request, directives: dict[str, Any]) -> AdapterOptions:
        """Canonical options taken out of the request's option fields (`options`); what is
        left (with the directives) is this provider's own, replayed to it alone."""
        body = cast(dict[str, Any], request)
        return imported_options(
            body,
            option_fields(body, _BODY_KEYS),
            self.facts,
            model=self.model_id,
            session_id=self.session_id,
            tool_ids=self.tool_ids,
            directives=directives,
        )

    # --- tools ----------------------------------------------------------------------

    def tools(self, wire: list[Tool], directives: dict[str, Any]) -> list[ToolDefinition]:
        """Function tools (with `strict` as sent, `strict`, and `defer_loading`) and the
        built-in ones as canonical provider tools (`provider_tools`), in order."""
        taken: set[str] = set()
        return [self.tool_definition(tool, f"tools[{i}]", taken) for i, tool in enumerate(wire)]

    def tool_definition(
        self, tool: Tool, path: str, taken: set[str], extra: dict[str, Any] | None = None
    ) -> ToolDefinition:
        """One wire tool -> its canonical definition; `extra` goes into this provider's
        `provider_data` entry."""
        if tool["type"] != "function":
            return read_tool(ROWS[PROVIDER], tool, path=path, taken=taken, extra=extra)
        imported = imported_tool(
            tool.get("name"), tool.get("description"), tool.get("parameters"), provider=PROVIDER, path=path
        )
        taken.add(imported.name)
        imported = read_strict(imported, tool, PROVIDER, always=True)
        if cast(dict[str, Any], tool).get("defer_loading") is True:
            imported = imported.model_copy(update={"defer_loading": True})
        if extra:
            imported = with_provider_data(imported, PROVIDER, extra)
        return imported

    def offered_tools(self, taken: set[str]) -> list[ToolDefinition]:
        """The tools `additional_tools` items make available mid-conversation: canonical
        tools of the request (what they mean to any provider), each marked in this
        provider's `provider_data` with `additional_tools: {before}` (the id of the message
        the item stood before; null: the end), the first of an item also holding the item
        itself (`item`), so it goes back to this provider as it came, where it stood. A
        tool the request already declares by that name is not declared twice; an item
        holding no other is dropped with the WARN."""
        out: list[ToolDefinition] = []
        for item, path, at in self.offered:
            before = self.imported.messages[at].id if at < len(self.imported.messages) else None
            added = 0
            offered = read(
                list[Tool], item.get("tools"), provider=PROVIDER, path=f"{path}.tools", what="request"
            )
            for j, tool in enumerate(offered):
                if tool.get("type") == "function" and tool.get("name") in taken:
                    continue
                marker: dict[str, Any] = {"before": before}
                if not added:
                    marker["item"] = item
                out.append(
                    self.tool_definition(tool, f"{path}.tools[{j}]", taken, {"additional_tools": marker})
                )
                added += 1
            if not added:
                self.losses.imported(
                    path, item, "additional_tools offers only tools the request declares already"
                )
        return out

    # --- items ----------------------------------------------------------------------

    def item(self, item: Item, path: str, index: int) -> None:
        kind = item.get("type", "message")
        role = cast(dict[str, Any], item).get("role")
        if kind in _ASSISTANT_SIDE or (kind == "message" and role == "assistant"):
            if not self.pending:
                self.pending_at = index
            self.pending.append(item)
            return
        self.flush()
        if kind == "additional_tools":
            self.offered.append((dict(item), path, len(self.imported.messages)))
        elif kind == "message":
            self.message(cast(MessageItem, item), path)
        elif kind == "function_call_output":
            self.tool(cast(FunctionCallOutputItem, item), path)
        elif kind == "item_reference":
            self.references.append(dict(item))
            reason = (
                "an item_reference names an item stored on the server; its content is not in the request"
                f" (kept for replay to {PROVIDER} before the message after it)"
            )
            self.losses.imported(path, item, reason)
        else:
            self.losses.imported(path, item, f"item of type {kind!r} has no canonical block")

    def flush(self) -> None:
        """The pending run of assistant-side items -> one ASSISTANT message."""
        if not self.pending:
            return
        items, self.pending = self.pending, []
        found = read_items(
            items,
            path="input",
            start=self.pending_at,
            context=self.context,
            out=ItemRead(session_id=self.session_id, item_fields={}),
        )
        for other in found.other_items:
            self.losses.imported(f"input[{self.pending_at}:]", other["item"], "no canonical block")
        found.other_items = []
        raw = {"adapter": PROVIDER, **found.raw()}
        message = imported_assistant(
            self.context,
            provider=PROVIDER,
            content=found.blocks or [TextBlock(type="text", text="")],
            provider_raw=raw if len(raw) > 1 else None,
        )
        self.take_references(message.id)
        self.imported.add(message, f"input[{self.pending_at}]")

    def message(self, item: MessageItem, path: str) -> None:
        role = item["role"]
        content = item["content"]
        parts: list[Part] = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
        blocks: list[ContentBlock] = []
        for j, part in enumerate(parts):
            block = self.part(part, f"{path}.content[{j}]", images=role == "user")
            if block is not None:
                blocks.append(block)
        shape = {TYPELESS: "type" not in item, STRING_CONTENT: isinstance(content, str)}
        spelled = {k: True for k, v in shape.items() if v}
        if role in ("system", "developer"):
            self.system_roles.append(role)
            self.imported.add(self.new(Role.system, blocks, path, spelled), path)
        elif blocks:
            self.imported.add(self.new(Role.user, blocks, path, spelled), path)

    def part(self, part: Part, path: str, *, images: bool) -> ContentBlock | None:
        kind = part["type"]
        if kind in ("input_text", "output_text", "text") and "text" in part:
            return TextBlock(type="text", text=part["text"])
        if kind == "input_image" and images and part.get("image_url"):
            return self.image(str(part["image_url"]), path)
        if kind == "input_image" and images and part.get("file_id"):
            return self.file_image(str(part["file_id"]), path)
        if kind == "input_audio" and images and "input_audio" in part:
            return self.audio(part["input_audio"], path)
        if kind == "input_file" and images:
            document = self.document(part, path)
            if document is not None:
                return document
        self.losses.imported(path, part, f"content part of type {kind!r} has no canonical block here")
        return None

    def document(self, part: Part, path: str) -> DocumentBlock | None:
        """An `input_file` part -> a v2 DocumentBlock (None: nothing to point at)."""
        fields = cast(dict[str, Any], part)
        name = fields.get("filename") or None
        if isinstance(fields.get("file_data"), str):
            parsed = parse_data_url(fields["file_data"])
            if parsed is None:
                return None
            media_type, data = parsed
            source = MediaSource(kind=MediaSourceKind.base64, data=data)
        elif isinstance(fields.get("file_url"), str):
            url = fields["file_url"]
            media_type = mimetypes.guess_type(url)[0] or "application/pdf"
            source = MediaSource(kind=MediaSourceKind.url, data=url)
        elif part.get("file_id"):
            media_type = (mimetypes.guess_type(name)[0] if name else None) or "application/pdf"
            source = MediaSource(kind=MediaSourceKind.file_id, data=str(part["file_id"]), provider=PROVIDER)
        else:
            return None
        try:
            return DocumentBlock(type="document", source=source, media_type=media_type, title=name)
        except ValidationError as exc:
            raise not_canonical(exc, provider=PROVIDER, path=path) from None

    def file_image(self, file_id: str, path: str) -> ImageBlock:
        """An `input_image` by this provider's file id (the Files API gives no media type
        here: taken as PNG, which the id's replay to this provider does not depend on)."""
        source = MediaSource(kind=MediaSourceKind.file_id, data=file_id, provider=PROVIDER)
        return self.checked(lambda: ImageBlock(type="image", source=source, media_type="image/png"), path)

    def audio(self, audio: InputAudio, path: str) -> AudioBlock:
        """An `input_audio` part -> AudioBlock (its format named back as a media type)."""
        media_type = next((m for m, f in AUDIO_FORMATS.items() if f == audio["format"]), None)
        source = MediaSource(kind=MediaSourceKind.base64, data=audio["data"])
        made = media_type or f"audio/{audio['format']}"
        return self.checked(lambda: AudioBlock(type="audio", source=source, media_type=made), path)

    def checked(self, make: Callable[[], _B], path: str) -> _B:
        """`make()`, a pydantic refusal as the WireFormatError at `path`."""
        try:
            return make()
        except ValidationError as exc:
            raise not_canonical(exc, provider=PROVIDER, path=path) from None

    def image(self, url: str, path: str) -> ImageBlock:
        try:
            parsed = parse_data_url(url)
        except WireFormatError as exc:
            raise WireFormatError(exc.message, provider=PROVIDER, path=f"{path}.image_url") from None
        if parsed is not None:
            media_type, data = parsed
            source = MediaSource(kind=MediaSourceKind.base64, data=data)
        else:
            media_type, source = url_image_media_type(url), MediaSource(kind=MediaSourceKind.url, data=url)
        try:
            return ImageBlock(type="image", source=source, media_type=media_type)
        except ValidationError as exc:
            raise not_canonical(exc, provider=PROVIDER, path=path) from None

    def tool(self, item: FunctionCallOutputItem, path: str) -> None:
        call_id = item["call_id"]
        canonical = self.tool_ids.resolve_incoming(PROVIDER, call_id)
        metadata: dict[str, Any] = {}
        if canonical is None and self.continues is not None:
            # The call is in the continued response: named by it, its id kept resolvable.
            canonical = self.tool_ids.register_incoming(PROVIDER, call_id)
            metadata["continues"] = self.continues
        if canonical is None:
            raise WireFormatError(
                f"call_id {call_id!r} answers no earlier function_call",
                provider=PROVIDER,
                path=f"{path}.call_id",
                hint="a request continuing a stored response names it in previous_response_id",
            )
        output = item["output"]
        parts: list[Part] = [{"type": "input_text", "text": output}] if isinstance(output, str) else output
        blocks = [
            b
            for j, p in enumerate(parts)
            if (b := self.part(p, f"{path}.output[{j}]", images=True)) is not None
        ]
        result = ToolResultBlock(type="tool_result", tool_use_id=canonical, content=blocks)
        self.imported.add(self.new(Role.tool, [result], path, parent_tool_use_id=canonical, **metadata), path)

    def mark_continued(self, first: int) -> None:
        """The first message of `input` (at `first`) names the continued response."""
        if self.continues is None or first >= len(self.imported.messages):
            return
        message = self.imported.messages[first]
        if message.metadata.continues is None:
            metadata = message.metadata.model_copy(update={"continues": self.continues})
            self.imported.messages[first] = message.model_copy(update={"metadata": metadata})

    def take_references(self, message_id: str) -> None:
        """The item references waiting, as the ones before message `message_id` (`ITEMS_BEFORE`)."""
        if self.references:
            self.before[message_id], self.references = self.references, []

    def new(
        self,
        role: Role,
        content: list[ContentBlock],
        path: str,
        shape: dict[str, Any] | None = None,
        **metadata: Any,
    ) -> Message:
        """A USER, SYSTEM or TOOL message (`ImportedMessages.new`; `shape`: how its item was
        spelled), with the item references that stood before it."""
        message = self.imported.new(role, content, path, shape, **metadata)
        self.take_references(message.id)
        return message


__all__ = ["import_request"]
