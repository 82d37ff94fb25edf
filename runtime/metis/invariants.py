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

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
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


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Field access that survives model_construct'ed and hand-built (dict) parts."""
    kind = type(obj)
    mapping = _IS_MAPPING.get(kind)
    if mapping is None:
        mapping = _IS_MAPPING[kind] = isinstance(obj, Mapping)
    if mapping:
        return obj.get(name, default)
    return getattr(obj, name, default)


_IS_MAPPING: dict[type, bool] = {dict: True}
"""Whether each type met is a Mapping, answered once per type: `isinstance` against the
Mapping ABC is a Python-level call, and `_get` runs a dozen times per message checked
(the store checks every row it reads)."""


def _kind(block: Any) -> str | None:
    kind = _get(block, "type")
    return kind if isinstance(kind, str) else None


def _id(obj: Any, name: str = "id") -> str | None:
    value = _get(obj, name)
    return value if isinstance(value, str) else None


def _blocks(message: Any) -> list[Any]:
    content = _get(message, "content")
    return list(content) if isinstance(content, list | tuple) else []


def check_message(
    message: Message | Mapping[str, Any], *, tools: ToolRegistry | None = None
) -> list[Violation]:
    """Every §5.1 / §5.2.1 / §5.3 violation of one message (and §5.2.4 when `tools` is given).

    `message` may also be a document (the JSON-compatible dict of a message): the parity
    test runs the schema's vectors through here as they are.
    """
    mid = _id(message)
    out: list[Violation] = []

    def bad(path: str, rule: str, problem: str) -> None:
        out.append(Violation(mid, path, rule, problem))

    role = _get(message, "role")
    metadata = _get(message, "metadata")
    status = (
        _get(metadata, "status", MessageStatus.complete) if metadata is not None else MessageStatus.complete
    )
    complete = status == MessageStatus.complete
    content = _get(message, "content")
    if not isinstance(content, list | tuple):
        bad("content", "§4.1", f"content must be a list of blocks, got {type(content).__name__}")
    blocks = _blocks(message)
    version = _version(message)
    allowed = ALLOWED_BLOCKS_BY_VERSION[version].get(role) if isinstance(role, str) else None
    if allowed is None:
        bad("role", "§4.1", f"unknown role {role!r}")
        allowed = frozenset()

    # §5.1.1 / §5.1.2: only USER and ASSISTANT are checked here; TOOL has its own
    # exactly-one rule below and SYSTEM may be empty.
    if complete and role in (Role.user, Role.assistant) and not blocks:
        bad("content", "§5.1.1", f"{role} messages at status complete need at least one block")
    if role == Role.tool and len(blocks) != 1:
        bad(
            "content",
            "§5.1.3",
            f"a TOOL message holds exactly one tool_result block, this one has {len(blocks)}",
        )

    for i, block in enumerate(blocks):
        kind = _kind(block)
        if allowed and kind not in allowed:
            bad(
                f"content[{i}].type",
                "§5.1.3",
                f"{kind} block not allowed in {role} messages ({_names(allowed)})",
            )
        _check_block(block, f"content[{i}]", complete, tools, bad, version=version)

    if role == Role.tool:
        _check_tool_link(metadata, blocks, bad)
    if role == Role.assistant and complete:
        _check_assistant_metadata(metadata, bad)
    return out


def _names(kinds: frozenset[str]) -> str:
    return "allowed: " + ", ".join(sorted(kinds)) if kinds else "no blocks allowed"


def _version(message: Any) -> int:
    """The schema version whose rules `message` is held to: the one it declares, if known."""
    version = _get(message, "schema_version")
    return version if type(version) is int and version in ALLOWED_BLOCKS_BY_VERSION else CURRENT_VERSION


def _check_block(
    block: Any, path: str, complete: bool, tools: ToolRegistry | None, bad: Any, *, version: int
) -> None:
    kind = _kind(block)
    if kind in MEDIA_BLOCKS:
        _check_source(block, path, bad)
    elif kind == "compaction" and _get(block, "summary") is None and _get(block, "data") is None:
        bad(path, "§4.2", "a compaction block holds a readable summary, opaque data, or both")
    elif kind == "server_tool_result":
        inner = _get(block, "content")
        for j, sub in enumerate(inner if isinstance(inner, list | tuple) else []):
            if _kind(sub) in MEDIA_BLOCKS:
                _check_source(sub, f"{path}.content[{j}]", bad)
    if kind == "tool_use":
        tool_id = _get(block, "id")
        if not (isinstance(tool_id, str) and is_tool_id(tool_id)):
            bad(
                f"{path}.id",
                "§5.2.1",
                f"tool id {tool_id!r} is not canonical (tu_<ulid>, minted by the core)",
            )
        if complete:
            _check_tool_input(block, path, tools, bad)
    elif kind == "tool_result":
        answered = _get(block, "tool_use_id")
        if not (isinstance(answered, str) and is_tool_id(answered)):
            bad(f"{path}.tool_use_id", "§5.2.1", f"tool id {answered!r} is not canonical (tu_<ulid>)")
        inner = _get(block, "content")
        kinds = TOOL_RESULT_BLOCKS_BY_VERSION[version]
        for j, sub in enumerate(inner if isinstance(inner, list | tuple) else []):
            sub_kind = _kind(sub)
            if sub_kind not in kinds:
                bad(
                    f"{path}.content[{j}].type",
                    "§4.2",
                    f"a tool_result holds {', '.join(sorted(kinds))} blocks only, not {sub_kind}",
                )
            elif sub_kind in MEDIA_BLOCKS:
                _check_source(sub, f"{path}.content[{j}]", bad)


def _check_source(block: Any, path: str, bad: Any) -> None:
    """v2 MediaSource: a provider-hosted `file_id` names its provider; no other kind does."""
    source = _get(block, "source")
    kind, provider = _get(source, "kind"), _get(source, "provider")
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

    _check_block(block, "", True, None, bad, version=version)
    return out


def _check_tool_input(block: Any, path: str, tools: ToolRegistry | None, bad: Any) -> None:
    name, value = _get(block, "name"), _get(block, "input")
    if not isinstance(value, Mapping):
        bad(f"{path}.input", "§4.2", f"tool input must be a JSON object, got {type(value).__name__}")
        return
    if tools is None:
        return
    if not isinstance(name, str) or name not in tools:
        bad(f"{path}.name", "§5.2.4", f"no registered tool named {name!r} to validate the input against")
        return
    for problem in tools.validate_input(name, value, tool_use_id=_get(block, "id")):
        bad(f"{path}.{problem.path}", "§5.2.4", problem.problem)


def _check_tool_link(metadata: Any, blocks: list[Any], bad: Any) -> None:
    parent = _get(metadata, "parent_tool_use_id")
    if parent is None:
        bad("metadata.parent_tool_use_id", "§5.3.4", "a TOOL message must name the tool_use it answers")
        return
    if not (isinstance(parent, str) and is_tool_id(parent)):
        bad("metadata.parent_tool_use_id", "§5.2.1", f"tool id {parent!r} is not canonical (tu_<ulid>)")
        return
    if len(blocks) == 1 and _kind(blocks[0]) == "tool_result":
        answered = _get(blocks[0], "tool_use_id")
        if answered != parent:
            bad("metadata.parent_tool_use_id", "§5.3.4", f"is {parent} but content[0] answers {answered}")


def _check_assistant_metadata(metadata: Any, bad: Any) -> None:
    model, provider = _get(metadata, "model"), _get(metadata, "provider")
    if model is None:
        bad("metadata.model", "§5.3.1", "an ASSISTANT message at status complete records its model")
    if provider is None:
        bad("metadata.provider", "§5.3.1", "an ASSISTANT message at status complete records its provider")
    if isinstance(model, str) and isinstance(provider, str) and provider_of(model) != provider:
        bad("metadata.model", "§6.3", f"model {model} is not a {provider} model id (<provider>:<model>)")
    if _get(metadata, "routing") is None:
        bad(
            "metadata.routing",
            "§5.3.2",
            "an ASSISTANT message at status complete records its routing decision",
        )
    if _get(metadata, "usage") is None:
        bad("metadata.usage", "§5.3.3", "an ASSISTANT message at status complete records its usage")


def check_links(
    message: Message, *, tool_uses: Mapping[str, str], answered: Container[str]
) -> list[Violation]:
    """§5.2.2 / §5.2.3 of one message against the session so far.

    `tool_uses` maps each earlier canonical tool id to its session id; `answered` holds the
    ids earlier tool_results answered. Neither is modified.
    """
    mid = _id(message)
    session = _get(message, "session_id")
    # A message naming a provider-held response it continues (metadata.continues) may
    # answer a call made there: that tool_use is named, not in this session (§5.2.2).
    continued = _get(_get(message, "metadata"), "continues")
    out: list[Violation] = []
    new_uses: set[str] = set()
    new_answers: set[str] = set()
    for i, block in enumerate(_blocks(message)):
        kind = _kind(block)
        if kind == "tool_result":
            tool_id = _id(block, "tool_use_id")
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
            tool_id = _id(block)
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
    session = _get(messages[0], "session_id") if messages else None
    for message in messages:
        mid = _id(message)
        sid = _get(message, "session_id")
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
        for block in _blocks(message):
            kind, use_id, answer_id = _kind(block), _id(block), _id(block, "tool_use_id")
            if kind == "tool_use" and use_id is not None:
                tool_uses.setdefault(use_id, sid)
            elif kind == "tool_result" and answer_id is not None:
                answered.add(answer_id)
    return out


def validate_message(message: Message, *, tools: ToolRegistry | None = None) -> None:
    """Raise InvariantError listing every violation of `message`."""
    violations = check_message(message, tools=tools)
    if violations:
        raise InvariantError(violations, message_id=_id(message))


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
