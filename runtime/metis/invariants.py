"""The invariants of spec §5, checked on messages and conversations: their one executable copy.

The JSON Schema states the per-message rules too (the `allOf` if/then clauses of
Message), for validators in other languages; the generated models check types, patterns
and discriminators only, and these functions are what Python runs for the rest.
tests/schema/test_vectors.py runs every schema vector through both and asserts they agree, so
the two statements cannot drift. The conversation rules (§5.2.2, §5.2.3: a tool_result
answers exactly one earlier tool_use of the same session, or one made in the provider-held
response its message names in `metadata.continues`) are beyond any single document
and live only here. Every check reports *all* violations at once, each with the message
id, the field path and the spec section, so one run tells the whole story.

Status (§5.1.5): a message that is not `complete` (PARTIAL while streaming, or stopped
as CANCELLED or ERROR) is exempt from exactly what the schema exempts: §5.1.1 (non-empty
content), §5.3.1-3 (assistant model, provider, routing, usage), and tool-input checks
(§5.2.4, and that `input` is an object). Everything else applies at every status:

- §5.1.3 role/block compatibility, including "a TOOL message holds exactly one
  tool_result" (the schema's role clauses carry no status condition);
- §5.3.4 parent_tool_use_id on TOOL messages, set and equal to the block's tool_use_id
  (the schema requires it at every status; TOOL messages are made whole by the core,
  never streamed, so there is no partial state in which it could be missing);
- §5.2.1-3 canonical, unique, answered-once tool ids (ids are minted at tool_use_start,
  before any partial snapshot exists);
- tool_result content holds text and image blocks only (§4.2).

`provider_raw` is never read (§5.3.5).
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, get_args

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import ContentBlock, Message, MessageStatus, Role
from pydantic import BaseModel

from .errors import InvariantError
from .ids import is_tool_id, provider_of

if TYPE_CHECKING:
    from .tools import ToolRegistry

_V1_BLOCKS: Mapping[str, frozenset[str]] = {
    Role.user: frozenset({"text", "image"}),
    Role.assistant: frozenset({"text", "tool_use", "thinking", "redacted_thinking"}),
    Role.system: frozenset({"text"}),
    Role.tool: frozenset({"tool_result"}),
}
_V2_BLOCKS: Mapping[str, frozenset[str]] = {
    **_V1_BLOCKS,
    Role.user: _V1_BLOCKS[Role.user] | {"document", "audio", "video", "search_result"},
    Role.assistant: _V1_BLOCKS[Role.assistant] | {"server_tool_use", "server_tool_result", "compaction"},
}
ALLOWED_BLOCKS_BY_VERSION: Mapping[int, Mapping[str, frozenset[str]]] = {
    1: _V1_BLOCKS,
    2: _V2_BLOCKS,
    3: _V2_BLOCKS,  # v3 adds types beside messages (options, tool kinds, usage units), no blocks
}
"""§5.1.3: the block types each role may carry, per schema version (a message is held to
the rules of the version it declares)."""
ALLOWED_BLOCKS: Mapping[str, frozenset[str]] = ALLOWED_BLOCKS_BY_VERSION[CURRENT_VERSION]
"""§5.1.3 at the version metis writes."""

TOOL_RESULT_BLOCKS_BY_VERSION: Mapping[int, frozenset[str]] = {
    1: frozenset({"text", "image"}),
    2: frozenset({"text", "image", "document", "search_result"}),
    3: frozenset({"text", "image", "document", "search_result"}),
}
"""§4.2: what a tool_result's own content may hold, per schema version."""
TOOL_RESULT_BLOCKS = TOOL_RESULT_BLOCKS_BY_VERSION[CURRENT_VERSION]
"""§4.2 at the version metis writes."""

MEDIA_BLOCKS = frozenset({"image", "document", "audio", "video"})
"""Blocks whose bytes are found through a source (a MediaSource in v2)."""


@dataclass(frozen=True)
class Violation:
    """One broken invariant: which message, where in it, which rule, what is wrong."""

    message_id: str | None
    path: str
    rule: str
    problem: str

    def __str__(self) -> str:
        where = self.path or "(message)"
        return f"message {self.message_id or '(no id)'}: {where}: {self.problem} [{self.rule}]"


BLOCK_CLASSES: frozenset[type[BaseModel]] = frozenset(get_args(get_args(ContentBlock.__value__)[0]))
"""The classes of the ContentBlock union, read from the generated alias (a new block type
joins by itself): what `type(block) in BLOCK_CLASSES` recognizes as a block model."""


Fields = Mapping[str, Any]
"""What the checks read a part through: its fields by name (`get`)."""


class _Attributes(Mapping[str, Any]):
    """The fields of a part that is neither a mapping nor a model, read as its attributes
    (what `getattr(part, name, default)` finds): a bad document's odd parts, judged as
    before. Only read by name: attributes are not listed (no keys, length 0)."""

    __slots__ = ("_part",)

    def __init__(self, part: Any) -> None:
        self._part = part

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self._part, key)
        except AttributeError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})
"""The fields of an absent part (None: a message without metadata, a block without source)."""
_MODELS: set[type] = set()
"""The model classes met (`_fields`): a class is judged once (`issubclass` against
BaseModel or the Mapping ABC is a Python-level call), then found here."""


def _fields(part: Any) -> Fields:
    """The fields of one part (a message, its metadata, a block, a source), read by name
    whatever the part is: a document (dict, Mapping) is its own; a model, validated or
    model_construct'ed, holds its fields in its instance dict (`__dict__`: what pydantic
    sets, by name, and what `getattr` reads for a field; `vars` costs ten times the
    lookup); None has none; anything else is read by attribute. Decided once per part
    walked, so each field is then one dict lookup, not a call: the checks run on every
    message built, imported or read from a store."""
    kind = type(part)
    if kind in _MODELS:
        return part.__dict__  # type: ignore[no-any-return]
    if kind is dict:
        return part  # type: ignore[no-any-return]
    if part is None:
        return _NO_FIELDS
    if issubclass(kind, Mapping):
        return part  # type: ignore[no-any-return]
    if issubclass(kind, BaseModel):
        _MODELS.add(kind)
        return part.__dict__  # type: ignore[no-any-return]
    return _Attributes(part)


_COMPLETE, _TOOL, _ASSISTANT = MessageStatus.complete, Role.tool, Role.assistant
_NOT_EMPTY = (Role.user, Role.assistant)
"""Members read once (an enum member's attribute lookup is a Python-level call on every
message checked)."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any] | tuple[Any, ...]:
    """A part's list of parts (content), or () when it is not a list (reported elsewhere)."""
    return value if isinstance(value, list | tuple) else ()


def check_message(
    message: Message | Mapping[str, Any], *, tools: ToolRegistry | None = None
) -> list[Violation]:
    """Every §5.1 / §5.2.1 / §5.3 violation of one message (and §5.2.4 when `tools` is given).

    `message` may also be a document (the JSON-compatible dict of a message): the parity
    test runs the schema's vectors through here as they are.
    """
    fields = _fields(message)
    mid = _text(fields.get("id"))
    out: list[Violation] = []

    def bad(path: str, rule: str, problem: str) -> None:
        out.append(Violation(mid, path, rule, problem))

    role = fields.get("role")
    meta = _fields(fields.get("metadata"))
    complete = meta.get("status", _COMPLETE) == _COMPLETE
    content = fields.get("content")
    if not isinstance(content, list | tuple):
        bad("content", "§4.1", f"content must be a list of blocks, got {type(content).__name__}")
        content = ()
    version = fields.get("schema_version")  # held to the rules of the version it declares, if known
    if type(version) is not int or version not in ALLOWED_BLOCKS_BY_VERSION:
        version = CURRENT_VERSION
    allowed = ALLOWED_BLOCKS_BY_VERSION[version].get(role) if isinstance(role, str) else None
    if allowed is None:
        bad("role", "§4.1", f"unknown role {role!r}")
        allowed = frozenset()

    # §5.1.1 / §5.1.2: only USER and ASSISTANT are checked here; TOOL has its own
    # exactly-one rule below and SYSTEM may be empty.
    if complete and not content and role in _NOT_EMPTY:
        bad("content", "§5.1.1", f"{role} messages at status complete need at least one block")
    if role == _TOOL and len(content) != 1:
        bad(
            "content",
            "§5.1.3",
            f"a TOOL message holds exactly one tool_result block, this one has {len(content)}",
        )

    block: Fields = _NO_FIELDS
    kind: str | None = None
    for i, part in enumerate(content):
        block = _fields(part)
        kind = block.get("type")
        if not isinstance(kind, str):
            kind = None
        if allowed and kind not in allowed:
            bad(
                f"content[{i}].type",
                "§5.1.3",
                f"{kind} block not allowed in {role} messages ({_names(allowed)})",
            )
        if kind != "text":  # a text block has no rule beyond its fields
            _check_block(block, f"content[{i}]", complete, tools, bad, kind=kind, version=version)

    if role == _TOOL:
        _check_tool_link(meta, block if len(content) == 1 else None, kind, bad)
    if role == _ASSISTANT and complete:
        _check_assistant_metadata(meta, bad)
    return out


def _names(kinds: frozenset[str]) -> str:
    return "allowed: " + ", ".join(sorted(kinds)) if kinds else "no blocks allowed"


def _check_block(
    block: Fields,
    path: str,
    complete: bool,
    tools: ToolRegistry | None,
    bad: Any,
    *,
    kind: str | None,
    version: int,
) -> None:
    """The §4.2 / §5.2 rules of one block (`block`, its fields; `kind`, its `type` tag)."""
    if kind == "tool_use":
        tool_id = block.get("id")
        if not (isinstance(tool_id, str) and is_tool_id(tool_id)):
            bad(
                f"{path}.id",
                "§5.2.1",
                f"tool id {tool_id!r} is not canonical (tu_<ulid>, minted by the core)",
            )
        if complete:
            _check_tool_input(block, path, tools, bad)
    elif kind == "tool_result":
        answered = block.get("tool_use_id")
        if not (isinstance(answered, str) and is_tool_id(answered)):
            bad(f"{path}.tool_use_id", "§5.2.1", f"tool id {answered!r} is not canonical (tu_<ulid>)")
        kinds = TOOL_RESULT_BLOCKS_BY_VERSION[version]
        for j, part in enumerate(_list(block.get("content"))):
            sub = _fields(part)
            sub_kind = _text(sub.get("type"))
            if sub_kind not in kinds:
                bad(
                    f"{path}.content[{j}].type",
                    "§4.2",
                    f"a tool_result holds {', '.join(sorted(kinds))} blocks only, not {sub_kind}",
                )
            elif sub_kind in MEDIA_BLOCKS:
                _check_source(sub, f"{path}.content[{j}]", bad)
    elif kind in MEDIA_BLOCKS:
        _check_source(block, path, bad)
    elif kind == "compaction" and block.get("summary") is None and block.get("data") is None:
        bad(path, "§4.2", "a compaction block holds a readable summary, opaque data, or both")
    elif kind == "server_tool_result":
        for j, part in enumerate(_list(block.get("content"))):
            sub = _fields(part)
            if _text(sub.get("type")) in MEDIA_BLOCKS:
                _check_source(sub, f"{path}.content[{j}]", bad)


def _check_source(block: Fields, path: str, bad: Any) -> None:
    """v2 MediaSource: a provider-hosted `file_id` names its provider; no other kind does."""
    source = _fields(block.get("source"))
    kind, provider = source.get("kind"), source.get("provider")
    if kind == "file_id" and provider is None:
        bad(f"{path}.source.provider", "§4.2", "a file_id source names the provider that hosts the file")
    elif kind != "file_id" and provider is not None:
        bad(f"{path}.source.provider", "§4.2", f"only a file_id source names a provider, not a {kind} one")


def check_content_block(block: Any, *, version: int = CURRENT_VERSION) -> list[Violation]:
    """The §4.2 rules of one content block on its own, at schema `version`: its media source,
    a compaction's payload, a tool_result's content (what the schema's block definitions
    say beyond their fields). `block` may be a model or a document."""
    out: list[Violation] = []

    def bad(path: str, rule: str, problem: str) -> None:
        out.append(Violation(None, path.lstrip("."), rule, problem))

    fields = _fields(block)
    _check_block(fields, "", True, None, bad, kind=_text(fields.get("type")), version=version)
    return out


def _check_tool_input(block: Fields, path: str, tools: ToolRegistry | None, bad: Any) -> None:
    name, value = block.get("name"), block.get("input")
    if type(value) is not dict and not isinstance(value, Mapping):
        bad(f"{path}.input", "§4.2", f"tool input must be a JSON object, got {type(value).__name__}")
        return
    if tools is None:
        return
    if not isinstance(name, str) or name not in tools:
        bad(f"{path}.name", "§5.2.4", f"no registered tool named {name!r} to validate the input against")
        return
    for problem in tools.validate_input(name, value, tool_use_id=block.get("id")):
        bad(f"{path}.{problem.path}", "§5.2.4", problem.problem)


def _check_tool_link(metadata: Fields, only: Fields | None, kind: str | None, bad: Any) -> None:
    """§5.3.4 of a TOOL message: `only` is its one block (None when it has another number),
    `kind` that block's tag."""
    parent = metadata.get("parent_tool_use_id")
    if parent is None:
        bad("metadata.parent_tool_use_id", "§5.3.4", "a TOOL message must name the tool_use it answers")
        return
    if not (isinstance(parent, str) and is_tool_id(parent)):
        bad("metadata.parent_tool_use_id", "§5.2.1", f"tool id {parent!r} is not canonical (tu_<ulid>)")
        return
    if only is not None and kind == "tool_result":
        answered = only.get("tool_use_id")
        if answered != parent:
            bad("metadata.parent_tool_use_id", "§5.3.4", f"is {parent} but content[0] answers {answered}")


def _check_assistant_metadata(metadata: Fields, bad: Any) -> None:
    model, provider = metadata.get("model"), metadata.get("provider")
    if model is None:
        bad("metadata.model", "§5.3.1", "an ASSISTANT message at status complete records its model")
    if provider is None:
        bad("metadata.provider", "§5.3.1", "an ASSISTANT message at status complete records its provider")
    if isinstance(model, str) and isinstance(provider, str) and provider_of(model) != provider:
        bad("metadata.model", "§6.3", f"model {model} is not a {provider} model id (<provider>:<model>)")
    if metadata.get("routing") is None:
        bad(
            "metadata.routing",
            "§5.3.2",
            "an ASSISTANT message at status complete records its routing decision",
        )
    if metadata.get("usage") is None:
        bad("metadata.usage", "§5.3.3", "an ASSISTANT message at status complete records its usage")


def check_links(
    message: Message, *, tool_uses: Mapping[str, str], answered: Container[str]
) -> list[Violation]:
    """§5.2.2 / §5.2.3 of one message against the session so far.

    `tool_uses` maps each earlier canonical tool id to its session id; `answered` holds the
    ids earlier tool_results answered. Neither is modified.
    """
    fields = _fields(message)
    mid = _text(fields.get("id"))
    session = fields.get("session_id")
    # A message naming a provider-held response it continues (metadata.continues) may
    # answer a call made there: that tool_use is named, not in this session (§5.2.2).
    continued = _fields(fields.get("metadata")).get("continues")
    out: list[Violation] = []
    new_uses: set[str] = set()
    new_answers: set[str] = set()
    for i, part in enumerate(_list(fields.get("content"))):
        block = _fields(part)
        kind = _text(block.get("type"))
        if kind == "tool_result":
            tool_id = _text(block.get("tool_use_id"))
            owner = tool_uses.get(tool_id) if tool_id is not None else None
            path = f"content[{i}].tool_use_id"
            if owner is None:
                if continued is None:
                    out.append(
                        Violation(mid, path, "§5.2.2", f"answers {tool_id}, which no earlier tool_use made")
                    )
            elif owner != session:
                out.append(
                    Violation(
                        mid,
                        path,
                        "§5.2.2",
                        f"answers {tool_id} of session {owner}; tool ids never cross sessions",
                    )
                )
            elif tool_id in answered or tool_id in new_answers:
                out.append(
                    Violation(
                        mid, path, "§5.2.3", f"{tool_id} is already answered; a retry gets a new tool id"
                    )
                )
            if tool_id is not None:
                new_answers.add(tool_id)
        elif kind == "tool_use":
            tool_id = _text(block.get("id"))
            if tool_id is not None and (tool_id in tool_uses or tool_id in new_uses):
                out.append(
                    Violation(
                        mid,
                        f"content[{i}].id",
                        "§5.2.3",
                        f"tool id {tool_id} is already used; every call gets a new id",
                    )
                )
            if tool_id is not None:
                new_uses.add(tool_id)
    return out


def check_conversation(messages: Sequence[Message], *, tools: ToolRegistry | None = None) -> list[Violation]:
    """Every violation of every message and of the links between them, in message order.

    One pass, O(total blocks). Also checks that all messages share the first one's
    session (§4.1) and that no message id repeats (§6.1). Message ids are not required to
    increase: a system prompt composed per request is placed first with a newer id.
    """
    out: list[Violation] = []
    tool_uses: dict[str, str] = {}
    answered: set[str] = set()
    seen_ids: set[str] = set()
    session = _fields(messages[0]).get("session_id") if messages else None
    for message in messages:
        fields = _fields(message)
        mid = _text(fields.get("id"))
        sid: Any = fields.get("session_id")
        out.extend(check_message(message, tools=tools))
        if sid != session:
            out.append(
                Violation(
                    mid, "session_id", "§4.1", f"belongs to session {sid}, the conversation to {session}"
                )
            )
        if mid is not None:
            if mid in seen_ids:
                out.append(Violation(mid, "id", "§6.1", "message id appears twice in the conversation"))
            seen_ids.add(mid)
        out.extend(check_links(message, tool_uses=tool_uses, answered=answered))
        for part in _list(fields.get("content")):
            block = _fields(part)
            kind, use_id, answer_id = (
                _text(block.get("type")),
                _text(block.get("id")),
                _text(block.get("tool_use_id")),
            )
            if kind == "tool_use" and use_id is not None:
                tool_uses.setdefault(use_id, sid)
            elif kind == "tool_result" and answer_id is not None:
                answered.add(answer_id)
    return out


def validate_message(message: Message, *, tools: ToolRegistry | None = None) -> None:
    """Raise InvariantError listing every violation of `message`."""
    violations = check_message(message, tools=tools)
    if violations:
        raise InvariantError(violations, message_id=_text(_fields(message).get("id")))


def validate_conversation(messages: Sequence[Message], *, tools: ToolRegistry | None = None) -> None:
    """Raise InvariantError listing every violation of the conversation."""
    violations = check_conversation(messages, tools=tools)
    if violations:
        raise InvariantError(violations)


__all__ = [
    "ALLOWED_BLOCKS",
    "ALLOWED_BLOCKS_BY_VERSION",
    "BLOCK_CLASSES",
    "MEDIA_BLOCKS",
    "TOOL_RESULT_BLOCKS",
    "TOOL_RESULT_BLOCKS_BY_VERSION",
    "Violation",
    "check_content_block",
    "check_conversation",
    "check_links",
    "check_message",
    "validate_conversation",
    "validate_message",
]
