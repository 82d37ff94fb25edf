"""A recorded Chat Completions request -> canonical messages, tools and options (the importer).

The body is read once through the declared `Request` shape. Canonical options are taken
out of the top-level option fields by the dialect's facts row (`options`): a tool choice
only when writing it back gives the same wire value (a tool named "auto" stays), a
nested option leaving what sits beside it (`reasoning: {"max_tokens": N, "exclude": true}`
keeps `exclude`). The rest is this provider's own, in `options.provider_options[name]`.
Parts and fields metis cannot hold are dropped with a WARN and listed in
`WireImport.dropped` with their path and value. The deprecated `function` role and a lone
`function_call` have no tool call id to link a result to: WireFormatError, not a guess.
A content part's `cache_control` becomes the `cache_point` of the block made from it (the
canonical breakpoint: it replays to Anthropic as its `cache_control`, and to this provider
on the same part); one that is no plain ephemeral marker (`{"type": "ephemeral", "ttl"?:
"5m" | "1h"}`) is dropped and listed. A tool definition's marker and a `developer` system
role come back as `metis` directives in the provider's own options entry (see `to_wire`),
so the import replays to this provider as it was sent. Media parts are read by `media`:
`file` parts become DocumentBlocks (`filename` as the title), `input_audio` AudioBlocks,
`video_url` VideoBlocks (where the dialect has them), and a tool message's `image_url`
parts images in the result where the dialect takes them (`tool_result_images`). `annotations`
on an assistant turn are listed as dropped: no dialect sends them back (see `to_wire`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from metis_schema.v3 import (
    CachePoint,
    ContentBlock,
    Message,
    Role,
    TextBlock,
    ToolDefinition,
    ToolUseBlock,
)
from pydantic import BaseModel, ValidationError

from ...assembly import import_context, imported_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from .._kit.base import AdapterOptions, WireImport
from .._kit.cache_points import cache_control
from .._kit.facts import ProviderFacts
from .._kit.importing import (
    ImportedMessages,
    import_model,
    imported_tool,
    system_role,
    text_block,
    tool_result_block,
)
from .._kit.losses import Losses
from .._kit.options import imported_options, option_fields, take
from .._kit.provider_tools import OPTIONS, PLUGINS, read_tool, row_of
from .._kit.reader import read
from .._kit.strict import read_strict
from .from_wire import not_canonical, read_assistant, response_raw
from .media_parts import MediaReader
from .to_wire import DEFAULT_CACHE_CONTROL
from .wire import (
    Content,
    Fields,
    HistoryAssistantMessage,
    Request,
    RequestMessage,
    SystemMessage,
    Tool,
    ToolMessage,
    UserMessage,
)

_BODY_KEYS = frozenset({"model", "messages", "tools"})
_ASSISTANT_KEYS = frozenset({"role", "content", "refusal", "tool_calls", "name", "function_call"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
_Block = TypeVar("_Block", bound=BaseModel)


def import_request(
    name: str, facts: ProviderFacts, body: Any, *, session_id: str, tool_ids: ToolIdMap
) -> WireImport:
    """A recorded request body -> canonical messages, tools and options (see module doc)."""
    request = read(Request, body, provider=name, what="request")
    return _Importer(name, facts, session_id, tool_ids, import_model(request, name)).read(request)


class _Importer:
    """One import: messages in order, with what could not be kept listed."""

    def __init__(
        self, name: str, facts: ProviderFacts, session_id: str, tool_ids: ToolIdMap, model_id: str
    ) -> None:
        self.name = name
        self.facts = facts
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.model_id = model_id
        self.context = import_context(provider=name, session_id=session_id, model=model_id, tool_ids=tool_ids)
        self.losses = Losses(name, session_id)
        self.breakpoints: dict[str, Any] = {}
        self.system_roles: list[str] = []
        self.call_names: dict[str, str] = {}
        """Canonical call id -> the function it called, of the assistant turns read so far."""
        self.tool_names: list[bool] = []
        """Per tool message: whether it named the function its call called (Mistral's `name`)."""
        self.media = MediaReader(name, facts, self.losses.imported)
        self.assistant_keys = _ASSISTANT_KEYS | set(facts.plain_reasoning_keys)
        if facts.reasoning_details:
            self.assistant_keys |= {"reasoning_details"}
        if facts.prefix_marker:
            self.assistant_keys |= {"prefix"}
        self.last_path = ""
        self.imported = ImportedMessages(session_id, name)
        """The messages read, with their paths (`WireImport.paths`)."""

    def read(self, request: Request) -> WireImport:
        self.last_path = f"messages[{len(request['messages']) - 1}]"
        for i, wire in enumerate(request["messages"]):
            path = f"messages[{i}]"
            message = self.message(wire, path)
            if message is not None:
                self.imported.add(message, path)
        tools = self.tools(request.get("tools") or [])
        options = self.options(request, tools)
        return WireImport(
            messages=self.imported.messages,
            tools=tools,
            options=options,
            dropped=self.losses.dropped,
            paths=self.imported.paths,
        )

    # --- options --------------------------------------------------------------------

    def options(self, request: Request, tools: list[ToolDefinition]) -> AdapterOptions:
        """Canonical options taken out of the request's option fields (`options`); what is
        left is this provider's own, replayed to it alone. Fields that ask for a
        provider-run tool (`web_search_options`, OpenRouter's `web` plugin) become tools."""
        body = cast(Fields, request)
        fields = option_fields(body, _BODY_KEYS)
        tools.extend(self.search_tools(fields, {t.name for t in tools}))
        stream_usage = None
        if self.facts.stream_usage_option and body.get("stream") is True:
            # the writer asks for it itself when streaming; a stream that did not is told apart
            stream_usage = take(fields, "stream_options.include_usage")
        directives = self.directives()
        if self.facts.stream_usage_option and body.get("stream") is True and stream_usage is None:
            directives["stream_usage"] = False
        if body.get("stream") is False:  # the writer leaves a non-streamed request's default out
            directives["stream_sent"] = True
        return imported_options(
            body,
            fields,
            self.facts,
            model=self.model_id,
            session_id=self.session_id,
            tool_ids=self.tool_ids,
            directives=directives,
        )

    def directives(self) -> dict[str, Any]:
        out = system_role(self.system_roles, self.losses)
        if self.tool_names and all(self.tool_names):
            out["tool_names"] = True
        if self.breakpoints:
            out["cache_breakpoints"] = [
                point if control == DEFAULT_CACHE_CONTROL else {"at": point, "cache_control": control}
                for point, control in self.breakpoints.items()
            ]
        return out

    def search_tools(self, fields: dict[str, Any], taken: set[str]) -> list[ToolDefinition]:
        """The option field and plugins that ask for a provider-run tool, taken out of
        `fields` as canonical tools (a plugin remembers its place in `plugins`)."""
        out: list[ToolDefinition] = []
        option = OPTIONS.get(self.name)
        if option is not None:
            for kind_row in option.kinds:
                if kind_row.wire in fields:
                    wire = {kind_row.wire: fields.pop(kind_row.wire)}
                    out.append(read_tool(option, wire, path=kind_row.wire, taken=taken))
        plugins, row = fields.get("plugins"), PLUGINS.get(self.name)
        if row is not None and isinstance(plugins, list):
            kept: list[Any] = []
            for i, plugin in enumerate(plugins):
                if isinstance(plugin, dict) and row.by_spelling(str(plugin.get("id"))) is not None:
                    out.append(read_tool(row, plugin, path=f"plugins[{i}]", taken=taken, extra={"plugin": i}))
                else:
                    kept.append(plugin)
            if kept:
                fields["plugins"] = kept
            else:
                del fields["plugins"]
        return out

    # --- tools ----------------------------------------------------------------------

    def tools(self, wire: list[Tool]) -> list[ToolDefinition]:
        """Function tools (`strict` as sent, `strict`) and other tools as canonical
        provider tools (`provider_tools`: OpenRouter's `openrouter:*` server tools by
        meaning, anything else kept as this provider's own)."""
        out: list[ToolDefinition] = []
        taken: set[str] = set()
        for i, tool in enumerate(wire):
            path = f"tools[{i}]"
            function = tool.get("function")
            if tool.get("type") != "function" or function is None:
                out.append(read_tool(row_of(self.name), cast(Fields, tool), path=path, taken=taken))
                continue
            imported = imported_tool(
                function["name"],
                function.get("description"),
                function.get("parameters"),
                provider=self.name,
                path=f"{path}.function",
            )
            taken.add(imported.name)
            out.append(read_strict(imported, cast(Fields, function), self.name, always=False))
            self.note_cache(tool.get("cache_control"), "tools", path)
            for key in sorted(function.keys() - _FUNCTION_KEYS):
                self.losses.imported(
                    f"{path}.function.{key}",
                    cast(Fields, function)[key],
                    "no canonical place for this tool field",
                )
        return out

    # --- messages -------------------------------------------------------------------

    def message(self, wire: RequestMessage, path: str) -> Message | None:
        if wire["role"] == "function":
            raise WireFormatError(
                "the deprecated function role has no tool_call_id to link it to a tool call",
                provider=self.name,
                path=f"{path}.role",
                hint="use tool_calls and role tool",
            )
        name = cast(Fields, wire).get("name")
        if wire["role"] == "tool":
            return self.tool(wire, path, name)
        if isinstance(name, str):
            self.losses.imported(f"{path}.name", name, "participant names have no canonical place")
        if wire["role"] == "assistant":
            return self.assistant(wire, path)
        if wire["role"] == "user":
            return self.user(wire, path)
        return self.system(wire, path)

    def system(self, wire: SystemMessage, path: str) -> Message:
        self.system_roles.append(wire["role"])
        content = wire.get("content")
        return self.imported.new(Role.system, self.parts(content, path, media=False), path)

    def user(self, wire: UserMessage, path: str) -> Message | None:
        content = wire.get("content")
        blocks = self.parts(content, path, media=True)
        if not blocks:
            return None  # every part was dropped (and listed)
        return self.imported.new(Role.user, blocks, path)

    def tool(self, wire: ToolMessage, path: str, name: Any) -> Message:
        """A tool message; its `name` (Mistral's `ToolMessage.name`) is the function its call
        called, which the writer knows again (the `tool_names` directive), else it is dropped."""
        provider_id = wire["tool_call_id"]
        canonical = self.tool_ids.resolve_incoming(self.name, provider_id)
        if canonical is None:
            raise WireFormatError(
                f"tool_call_id {provider_id!r} answers no earlier tool call",
                provider=self.name,
                path=f"{path}.tool_call_id",
            )
        named = name is not None and name == self.call_names.get(canonical)
        self.tool_names.append(named)
        if name is not None and not named:
            self.losses.imported(
                f"{path}.name",
                name,
                "a tool message's name that is not its call's function has no canonical place",
            )
        content = wire.get("content")
        blocks = self.parts(content, path, media=False, images=self.facts.tool_result_images)
        try:
            result = tool_result_block(canonical, blocks)
        except ValidationError as exc:
            raise not_canonical(exc, provider=self.name, path=path) from None
        return self.imported.new(Role.tool, [result], path, parent_tool_use_id=canonical)

    def assistant(self, wire: HistoryAssistantMessage, path: str) -> Message:
        fields = cast(Fields, wire)
        if not self.assistant_keys.issuperset(fields):  # the usual turn has no other field
            for key in sorted(fields.keys() - self.assistant_keys):
                if fields[key] is not None:
                    self.losses.imported(
                        f"{path}.{key}", fields[key], "no canonical place for this assistant field"
                    )
        prefix = fields.get("prefix") if self.facts.prefix_marker else None
        if prefix is not None and (prefix is not True or path != self.last_path):
            # `prefix: true` on the last message is the trailing assistant message's meaning
            # (`ProviderFacts.prefix_marker`), written back by to_wire; anything else says more.
            self.losses.imported(
                f"{path}.prefix", prefix, "prefix is the mark of the trailing assistant message only"
            )
        read = read_assistant(self.name, self.facts, wire, path=path, context=self.context, citations=False)
        for part in read.unsupported:
            self.losses.imported(path, part, "no canonical form")
        read.unsupported = []
        for block in read.blocks:
            if isinstance(block, ToolUseBlock):
                self.call_names[block.id] = block.name
        return imported_assistant(
            self.context,
            provider=self.name,
            content=self.assistant_cache(wire.get("content"), read.blocks, path)
            or [TextBlock(type="text", text="")],
            provider_raw=response_raw(self.name, read.raw()) if read.keeps() else None,
        )

    def parts(
        self, content: Content | None, path: str, *, media: bool, images: bool | None = None
    ) -> list[ContentBlock]:
        """`content` as a string or parts -> text blocks, and where `media` (USER messages)
        image, document and audio blocks (images alone where `images`); other parts dropped
        and listed."""
        if isinstance(content, str):
            return [text_block(content)]
        images = media if images is None else images
        blocks: list[ContentBlock] = []
        for j, part in enumerate(content or ()):
            part_path = f"{path}.content[{j}]"
            kind = part.get("type")
            text = part.get("text")
            block: ContentBlock
            if kind == "text" and text is not None:
                block = text_block(text)
            elif kind == "image_url" and images:
                block = self.media.image(part, part_path)
            elif kind == "file" and media and "file" in part:
                block = self.media.document(part["file"], part_path)
            elif kind == "input_audio" and media and "input_audio" in part:
                block = self.media.audio(part["input_audio"], part_path)
            elif kind == "video_url" and media and self.facts.video_parts and "video_url" in part:
                block = self.media.video(part["video_url"], part_path)
            else:
                self.losses.imported(
                    part_path, part, f"content part of type {kind!r} has no canonical form here"
                )
                continue
            blocks.append(self.cached(block, part, part_path))
        return blocks

    # --- cache markers and drops ----------------------------------------------------

    def cached(self, block: _Block, part: Mapping[str, Any], path: str) -> _Block:
        """`block` with the breakpoint of the part it was made from (the same block when the
        part has none, or one this provider or metis cannot hold: dropped and listed)."""
        point = self.cache_point(part.get("cache_control"), path)
        return block if point is None else block.model_copy(update={"cache_point": point})

    def assistant_cache(
        self, content: Content | list[Any] | None, blocks: list[ContentBlock], path: str
    ) -> list[ContentBlock]:
        """An assistant turn's blocks with the breakpoints of its text parts: `read_assistant`
        makes one text block per text part, in order (reasoning is never a text block; a
        top-level `refusal` comes after the parts)."""
        if not isinstance(content, list):
            return blocks
        texts = iter([i for i, b in enumerate(blocks) if isinstance(b, TextBlock)])
        out = list(blocks)
        for j, part in enumerate(content):
            part_path = f"{path}.content[{j}]"
            kind = part.get("type")
            made = kind in ("text", "refusal") and isinstance(part.get(kind), str)
            index = next(texts, None) if made else None
            if index is not None:
                out[index] = self.cached(out[index], part, part_path)
            elif part.get("cache_control") is not None:
                reason = (
                    "no text block to carry it"
                    if self.facts.cache_control
                    else "this API has no cache_control"
                )
                self.losses.imported(f"{part_path}.cache_control", part["cache_control"], reason)
        return out

    def cache_point(self, control: Any, path: str) -> CachePoint | None:
        """A wire `cache_control` -> the canonical breakpoint, or None (absent, or dropped)."""
        if control is None:
            return None
        if not self.facts.cache_control:
            self.losses.imported(f"{path}.cache_control", control, "this API has no cache_control")
            return None
        try:
            point = CachePoint.model_validate(
                {"ttl": control.get("ttl")} if isinstance(control, dict) else {}
            )
        except ValidationError:
            point = None
        if point is None or cache_control(point) != control:
            reason = 'not an ephemeral cache marker {"type": "ephemeral", "ttl"?: "5m" | "1h"}'
            self.losses.imported(f"{path}.cache_control", control, reason)
            return None
        return point

    def note_cache(self, control: Any, point: str, path: str) -> None:
        """A tool definition's marker: kept as a `cache_breakpoints` directive entry."""
        if control is None:
            return
        if not self.facts.cache_control:
            self.losses.imported(f"{path}.cache_control", control, "this API has no cache_control")
            return
        self.breakpoints.setdefault(point, control)


__all__ = ["import_request"]
