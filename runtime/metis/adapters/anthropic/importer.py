"""A recorded Anthropic request body -> canonical messages, tools and options (the importer).

The body is checked once against `wire.Request`; string content is already a text block
list there. A `user` turn becomes one TOOL message per tool_result, in order, then one
USER message of the rest. Text (with citations), images, documents and search results
become canonical, in turns and inside tool results; `cache_control` is the block's
`cache_point`; assistant turns are read as replies are (`from_wire.assistant_block`:
server tool blocks and compaction too). Blocks with no canonical type are dropped with a
WARN naming them and kept verbatim in provider_raw at their position, so an export back
to Anthropic replays the request as sent; so does how a turn was spelled (string content,
a `system` turn among the messages: `to_wire.SHAPE_KEYS`, by message id in the
`SPELLED` directive). A turn made only of such blocks cannot become
a valid canonical message and is a WireFormatError. Tools keep `strict` (its literal when
needed, `strict`), `defer_loading` and `cache_control` (in provider_data, replayed to
Anthropic alone: `tool_fields`); their other fields with no canonical place
(`input_examples`, ...) go to `WireImport.dropped`. Server tools
(`web_search_*`, `code_execution_*`, `tool_search_tool_*`, `mcp_toolset`, ...) become
canonical provider tools (`provider_tools`), replayed to Anthropic as they were sent.
Canonical options are taken out of the top-level option fields (`options`): the facts
row's fields, the tool choice and an enabled thinking budget, each leaving what carries no
canonical meaning (`disable_parallel_tool_use`, `metadata`, `top_k`, adaptive thinking...)
in `options.provider_options["anthropic"]`, replayed to Anthropic alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    ToolDefinition,
    ToolResultBlock,
)

from ...assembly import import_context, imported_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from .._kit.base import AdapterOptions, WireBody, WireImport
from .._kit.cache_points import with_cache_point
from .._kit.images import url_image_media_type
from .._kit.importing import ImportedMessages, imported_tool, resolve_import_model
from .._kit.losses import Losses
from .._kit.options import imported_options, option_fields, take
from .._kit.provider_tools import ROWS, read_tool
from .._kit.reader import read
from .._kit.strict import read_strict
from .._kit.tool_fields import KEPT, read_kept
from . import wire
from .citations import read_text
from .documents import read_document, read_search_result
from .facts import FACTS, PROVIDER
from .from_wire import assistant_block
from .provider_raw import Replay, warn_foreign
from .to_wire import STRING_CONTENT, SYSTEM_TURN

_CONTENT = frozenset({"messages", "system", "tools"})
"""Top-level request fields the import maps as content; every other one is an option."""

_TEXT_KEYS = frozenset({"type", "text", "citations", "cache_control"})
_IMAGE_KEYS = frozenset({"type", "source", "cache_control"})
_DOCUMENT_KEYS = frozenset({"type", "source", "title", "context", "citations", "cache_control"})
_SEARCH_RESULT_KEYS = frozenset({"type", "source", "title", "content", "citations", "cache_control"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"})
_TOOL_KEYS = frozenset(
    {"type", "name", "description", "input_schema", "strict", "defer_loading", *KEPT[PROVIDER]}
)
"""Keys of a client tool with a canonical field or kept for replay; the others are listed as dropped."""


def import_request(body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
    """A recorded `POST /v1/messages` body -> WireImport (see the module docstring)."""
    request = read(wire.Request, body, provider=PROVIDER, what="request")
    model = resolve_import_model(f"{PROVIDER}:{request['model']}", PROVIDER)
    reader = _Reader(session_id, tool_ids, model)
    imported = reader.imported
    system = request.get("system")
    if system is not None:
        imported.add(reader.system(system, "system"), "system")
    for i, turn in enumerate(request["messages"]):
        for message in reader.turn(turn, f"messages[{i}]", body["messages"][i]):
            imported.add(message, f"messages[{i}]")
    losses = Losses(PROVIDER, session_id)
    tools: list[ToolDefinition] = []
    taken: set[str] = set()
    for i, tool in enumerate(request.get("tools") or ()):
        if tool.get("type") not in (None, "custom"):  # a server tool (web_search_..., bash_...)
            tools.append(_server_tool(body, i, taken))
            continue
        tool_def = imported_tool(
            tool["name"],
            tool.get("description"),
            tool.get("input_schema"),
            provider=PROVIDER,
            path=f"tools[{i}]",
        )
        taken.add(tool_def.name)
        tool_def = read_strict(tool_def, body["tools"][i], PROVIDER, always=False)
        tool_def = read_kept(tool_def, body["tools"][i], PROVIDER)
        if body["tools"][i].get("defer_loading") is True:
            tool_def = tool_def.model_copy(update={"defer_loading": True})
        tools.append(tool_def)
        for key in sorted(set(body["tools"][i]) - _TOOL_KEYS):
            losses.imported(
                f"tools[{i}].{key}", body["tools"][i][key], f"tool field {key!r} has no canonical place"
            )
    return WireImport(
        messages=imported.messages,
        tools=tools,
        options=_options(body, model, session_id, tool_ids, imported.spelling()),
        dropped=losses.dropped,
        paths=imported.paths,
    )


def _server_tool(body: WireBody, i: int, taken: set[str]) -> ToolDefinition:
    """A server tool (or beta `mcp_toolset`, `computer_*`) as a canonical provider tool; an
    MCP toolset's server URL is read from the request's `mcp_servers` entry of that name
    (the entry itself stays an Anthropic option, replayed as it was)."""
    tool = read_tool(ROWS[PROVIDER], body["tools"][i], path=f"tools[{i}]", taken=taken)
    label = tool.config.server_label if tool.config is not None else None
    servers = body.get("mcp_servers")
    if label is not None and isinstance(servers, list):
        url = next((s.get("url") for s in servers if isinstance(s, dict) and s.get("name") == label), None)
        if isinstance(url, str) and url and tool.config is not None:
            config = tool.config.model_copy(update={"server_url": url})
            tool = tool.model_copy(update={"config": config})
    return tool


def _options(
    body: WireBody, model: str, session_id: str, tool_ids: ToolIdMap, directives: dict[str, Any]
) -> AdapterOptions:
    """Canonical options taken out of the option fields by the one rule
    (`options.imported_options`), with the enabled thinking budget; the rest is Anthropic's
    own, with the directives (how the messages were spelled: `SPELLED`)."""
    return imported_options(
        body,
        option_fields(body, _CONTENT),
        FACTS,
        model=model,
        session_id=session_id,
        tool_ids=tool_ids,
        directives=directives,
        read=_read,
    )


def _read(fields: dict[str, Any], found: dict[str, Any]) -> None:
    """Anthropic's own step of the import's options: a tool choice the row did not take
    that still names a type means nothing canonical (refused); an enabled thinking budget
    is the canonical `thinking_budget`."""
    if isinstance(fields.get("tool_choice"), dict) and "type" in fields["tool_choice"]:
        raise WireFormatError(
            f"tool_choice {fields['tool_choice']} means nothing canonical",
            provider=PROVIDER,
            path="tool_choice",
            hint='{"type": "tool"} needs a name; the other types take none',
        )
    found["thinking_budget"] = _thinking_budget(fields)


def _thinking_budget(fields: dict[str, Any]) -> int | None:
    """An enabled thinking budget, taken out of the option fields (other thinking types,
    adaptive or disabled, have no canonical option and stay Anthropic's own)."""
    thinking = fields.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    if not isinstance(thinking.get("budget_tokens"), int):
        return None
    take(fields, "thinking.type")
    budget: int = take(fields, "thinking.budget_tokens")
    return budget


class _Reader:
    """Turns the turns of one recorded request into canonical messages."""

    def __init__(self, session_id: str, tool_ids: ToolIdMap, model: str) -> None:
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.created_at = datetime.now(UTC)
        self.context = import_context(
            provider=PROVIDER,
            session_id=session_id,
            model=model,
            tool_ids=tool_ids,
            created_at=self.created_at,
        )
        self.shape: dict[str, Any] = {}
        """How the turn being read was spelled (`SHAPE_KEYS`), for each message made of it."""
        self.imported = ImportedMessages(session_id, PROVIDER)
        """The messages read, with their paths and how each turn was spelled (`SPELLED`)."""
        self.sent: Any = None
        """The content of the turn being read as recorded (a tool_result's string content)."""

    def system(self, blocks: Sequence[Mapping[str, Any]], path: str) -> Message:
        replay = Replay()
        content: list[ContentBlock] = []
        for i, block in enumerate(blocks):
            if block.get("type") != "text":
                raise WireFormatError(
                    "system blocks must be text blocks", provider=PROVIDER, path=f"{path}[{i}]"
                )
            content.append(read_text(block, replay, str(i), f"{path}[{i}]"))
            replay.keep_extras(str(i), block, _TEXT_KEYS)
        return self._message(Role.system, content, replay, path)

    def turn(self, turn: wire.Turn, path: str, sent: Mapping[str, Any]) -> list[Message]:
        """The messages of one turn (`sent`: the turn as recorded, for its spelling)."""
        role, content = turn["role"], turn["content"]
        self.shape = {STRING_CONTENT: True} if isinstance(sent.get("content"), str) else {}
        self.sent = sent.get("content")
        try:
            if role == "system":
                self.shape[SYSTEM_TURN] = True
                return [self.system(content, f"{path}.content")]
            if role == "assistant":
                return [self._assistant(content, path)]
            return self._user(content, path)
        finally:
            self.shape = {}

    def _message(
        self,
        role: Role,
        content: list[ContentBlock],
        replay: Replay,
        path: str,
        shape: dict[str, Any] | None = None,
        **metadata: Any,
    ) -> Message:
        raw = replay.dump()
        provider_raw = {"adapter": PROVIDER, **raw} if raw else None
        if role == Role.assistant:
            message = imported_assistant(
                self.context, provider=PROVIDER, content=content, provider_raw=provider_raw
            )
        else:
            if provider_raw is not None:
                metadata.update(provider=PROVIDER, provider_raw=provider_raw)
            message = self.imported.new(role, content, path, created_at=self.created_at, **metadata)
        # only a turn spelled otherwise than the writer spells it (an empty shape records nothing)
        self.imported.spell(message.id, dict(self.shape if shape is None else shape))
        return message

    def _assistant(self, content: Sequence[Mapping[str, Any]], path: str) -> Message:
        replay = Replay()
        blocks: list[ContentBlock] = []
        for j, block in enumerate(content):
            canonical = assistant_block(
                block, j, tool_ids=self.tool_ids, replay=replay, path=f"{path}.content"
            )
            if canonical is not None:
                blocks.append(canonical)
        return self._finish(Role.assistant, blocks, replay, path)

    def _finish(self, role: Role, blocks: list[ContentBlock], replay: Replay, path: str) -> Message:
        if not blocks:
            what = ", ".join(str(b.get("type")) for b in replay.foreign.values()) or "no blocks"
            raise WireFormatError(
                f"{role.value} turn has nothing metis can represent ({what})",
                provider=PROVIDER,
                path=f"{path}.content",
                hint="a canonical message needs at least one block",
            )
        message = self._message(role, blocks, replay, path)
        warn_foreign(
            self.session_id, message.id, replay.foreign_types(), f"imported {role.value} turn", replay.lost
        )
        return message

    def _user(self, content: Sequence[Mapping[str, Any]], path: str) -> list[Message]:
        """A user turn: one TOOL message per tool_result, in order, then a USER message of the rest."""
        results: list[tuple[Mapping[str, Any], str, int]] = []
        replay = Replay()
        blocks: list[ContentBlock] = []
        for j, block in enumerate(content):
            where = f"{path}.content[{j}]"
            if block.get("type") == "tool_result":
                results.append((block, where, j))
            else:  # positions count in the USER message's own wire list, results excluded
                _user_block(block, str(j - len(results)), into=blocks, replay=replay, path=where)
        if not results:
            return [self._finish(Role.user, blocks, replay, path)]
        # Foreign blocks with no text or image beside them ride on the last TOOL message,
        # right after its tool_result: where an export puts them back.
        trailing = {} if blocks else replay.foreign
        sent = self.sent if isinstance(self.sent, list) else []
        strung = {j for j, b in enumerate(sent) if isinstance(b, dict) and isinstance(b.get("content"), str)}
        out = [
            self._tool_result(b, where, trailing if n == len(results) - 1 else {}, j in strung)
            for n, (b, where, j) in enumerate(results)
        ]
        if blocks:
            out.append(self._finish(Role.user, blocks, replay, path))
        return out

    def _tool_result(
        self, block: Mapping[str, Any], path: str, trailing: Mapping[str, Any], strung: bool
    ) -> Message:
        """A TOOL message; `strung`: its content was a string (`STRING_CONTENT` on the message)."""
        canonical_id = self.tool_ids.resolve_incoming(PROVIDER, block["tool_use_id"])
        if canonical_id is None:
            raise WireFormatError(
                f"tool_result answers unknown tool_use id {block['tool_use_id']!r}",
                provider=PROVIDER,
                path=f"{path}.tool_use_id",
                hint="each tool_result must answer a tool_use of an earlier assistant turn",
            )
        replay = Replay()
        replay.keep_extras("0", block, _TOOL_RESULT_KEYS)
        for key, foreign in trailing.items():
            replay.foreign[str(int(key) + 1)] = foreign
        inner: list[ContentBlock] = []
        for k, item in enumerate(block.get("content", ())):
            _user_block(item, f"0/{k}", into=inner, replay=replay, path=f"{path}.content[{k}]")
        result = with_cache_point(
            ToolResultBlock(
                type="tool_result",
                tool_use_id=canonical_id,
                content=inner,
                is_error=block.get("is_error", False),
            ),
            block,
        )
        shape = {STRING_CONTENT: True} if strung else {}
        message = self._message(Role.tool, [result], replay, path, shape, parent_tool_use_id=canonical_id)
        warn_foreign(self.session_id, message.id, replay.foreign_types(), "imported tool_result", replay.lost)
        return message


def _user_block(
    block: Mapping[str, Any], key: str, *, into: list[ContentBlock], replay: Replay, path: str
) -> None:
    """A user-side block (a turn's or a tool_result's): text, images, documents and search
    results become canonical, anything else is kept in `replay` at `key`."""
    kind = block.get("type")
    canonical: ContentBlock | None = None
    known = _TEXT_KEYS
    if kind == "text":
        canonical = read_text(block, replay, key, path)
    elif kind == "image":
        canonical, known = _image(block, path), _IMAGE_KEYS
    elif kind == "document":
        canonical, known = read_document(block, path), _DOCUMENT_KEYS
    elif kind == "search_result":
        canonical, known = read_search_result(block, path), _SEARCH_RESULT_KEYS
    if canonical is None:
        replay.foreign[key] = dict(block)
        return
    into.append(canonical)
    replay.keep_extras(key, block, known)


def _image(block: Mapping[str, Any], path: str) -> ImageBlock | None:
    """A declared image block -> canonical image, or None for a source with no canonical kind (Files API)."""
    source = block["source"]
    if source.get("type") == "base64":
        kind, data, media = MediaSourceKind.base64, source["data"], source["media_type"]
    elif source.get("type") == "url":
        kind, data = MediaSourceKind.url, source["url"]
        media = url_image_media_type(data)
    else:
        return None
    try:
        image = ImageBlock(type="image", source=MediaSource(kind=kind, data=data), media_type=media)
    except ValueError as exc:
        raise WireFormatError(f"image cannot be imported: {exc}", provider=PROVIDER, path=path) from exc
    return with_cache_point(image, block)


__all__ = ["import_request"]
