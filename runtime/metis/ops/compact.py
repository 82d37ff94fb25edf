"""Compact: a model's summary stands in for the earlier turns of a long session.

`session.compact(keep_last=K, summarizer=MODEL)` sends the summarizer a transcript of
every turn but the last K (`plan`, `summary_request`) and stores its answer as an
ASSISTANT message holding one v2 compaction block (`compaction_message`). Nothing stored
is removed or rewritten: the stored turns stay, and only the projection — what the next
request is sent (`project`, applied by `replayable`) — changes: SYSTEM
messages, then the summary, then the turns after the ones it covers.

Which turns a compaction covers: the block's `provider` is "metis" (metis made it; the
model that wrote the summary is the message's `metadata.model`, with its usage and cost),
and its `data` — the compacting provider's own payload, which the schema replays to that
provider only, i.e. to no adapter — is `{"through": <id of the last message covered>}`.
A later compaction may cover an earlier one's summary: the summary carries its
compaction message's id in the projection, so `through` can name it.

The summary reaches the provider as a USER text turn: until adapters carry compaction
blocks themselves (issue 15: Anthropic context management, Responses compaction items),
every adapter drops the block, and text is what every provider reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from metis_schema.v3 import (
    CompactionBlock,
    ContentBlock,
    Message,
    MessageMetadata,
    MessageStatus,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from .. import _json
from ..errors import ClientError
from ..ids import new_message_id

COMPACTOR = "metis"
"""The `provider` of a compaction block metis made (see module doc)."""

INSTRUCTIONS = (
    "Summarize the conversation below so that it can continue from your summary alone. Keep "
    "every fact, decision, open question, file name, tool result and number the rest of the "
    "conversation may need; leave out pleasantries. Answer with the summary only."
)
SUMMARY_HEADING = "Summary of the earlier conversation:"


@dataclass(frozen=True)
class Plan:
    """What a compaction covers: the turns to summarize, and the id of the last of them."""

    covered: list[Message]
    through: str


def through_of(block: ContentBlock) -> str | None:
    """The id a metis compaction block covers through; None for any other block."""
    if not isinstance(block, CompactionBlock) or block.provider != COMPACTOR or not block.data:
        return None
    try:
        through = _json.loads(block.data).get("through")
    except (ValueError, AttributeError):
        return None
    return through if isinstance(through, str) else None


def covered_through(message: Message) -> tuple[CompactionBlock, str] | None:
    """The metis compaction block of `message` and the id it covers through, if it has one."""
    for block in message.content:
        through = through_of(block)
        if through is not None and isinstance(block, CompactionBlock):
            return block, through
    return None


def renamed(block: CompactionBlock, message_ids: Mapping[str, str]) -> CompactionBlock:
    """`block` with its `through` renamed as `message_ids` says (a fork copies messages
    under new ids); a block that is not a metis compaction is returned as it is."""
    through = through_of(block)
    if through is None or through not in message_ids:
        return block
    return block.model_copy(update={"data": _json.dumps({"through": message_ids[through]}).decode()})


def summary_turn(message: Message, block: CompactionBlock) -> Message:
    """The USER turn that carries a compaction's summary to the provider (in memory only)."""
    text = f"{SUMMARY_HEADING}\n\n{block.summary or ''}"
    return message.model_copy(
        update={
            "role": Role.user,
            "content": [TextBlock(type="text", text=text)],
            "metadata": MessageMetadata(),
        }
    )


def replayable(history: Sequence[Message]) -> list[Message]:
    """The messages a provider is sent: everything but assistant turns that did not finish.

    A CANCELLED or ERROR reply stays in the store for the record, but replaying it
    could hand the provider a tool call that was never answered or a half sentence
    it would treat as its own prefill. A compaction's summary stands in for the turns
    it covers (`project`). The client, the gateway, `export` and `convert` all send what
    this returns; it lives here, below the client, so operations need not import it.
    """
    return project([m for m in history if replayed(m)])


def replayed(message: Message) -> bool:
    """Whether `replayable` keeps `message` before compactions apply: anything but an
    assistant turn that did not finish (the one test; readers walking a session message
    by message, as `export_otel` does, ask it)."""
    return message.role != Role.assistant or message.metadata.status == MessageStatus.complete


def project(history: Sequence[Message]) -> list[Message]:
    """`history` as it is sent: each compaction replaces the turns it covers by its summary.

    A compaction whose `through` is not in what precedes it (a damaged row) replaces
    nothing, and its message is left out like every compaction message.
    """
    out: list[Message] = []
    for message in history:
        found = covered_through(message) if message.role == Role.assistant else None
        if found is None:
            out.append(message)
            continue
        block, through = found
        cut = next((i for i, m in enumerate(out) if m.id == through), None)
        if cut is None:
            continue
        kept = out[cut + 1 :]
        out = [m for m in out[: cut + 1] if m.role == Role.system] + [summary_turn(message, block), *kept]
    return out


def plan(projected: Sequence[Message], keep_last: int, session_id: str) -> Plan:
    """The turns a compaction keeping the last `keep_last` messages covers.

    The cut never separates tool results from the call they answer: it moves back past
    TOOL messages, so the kept part starts at a user turn or at the assistant turn whose
    calls it answers. SYSTEM messages are instructions, not turns: never covered.
    """
    if keep_last < 0:
        raise ClientError(f"keep_last must be 0 or more, got {keep_last}")
    turns = [i for i, m in enumerate(projected) if m.role != Role.system]
    cut = turns[-keep_last] if 0 < keep_last <= len(turns) else (len(projected) if keep_last == 0 else 0)
    while 0 < cut < len(projected) and projected[cut].role == Role.tool:
        cut -= 1
    covered = [m for m in projected[:cut] if m.role != Role.system]
    if not covered:
        raise ClientError(
            f"nothing to compact in session {session_id}: the last {keep_last} messages are all it has",
            hint="keep fewer messages",
        )
    return Plan(covered, projected[cut - 1].id)


def _line(block: ContentBlock) -> str | None:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return f"[called {block.name} {_json.dumps(block.input).decode()} as {block.id}]"
    if isinstance(block, ToolResultBlock):
        text = " ".join(item.text for item in block.content if isinstance(item, TextBlock))
        return f"[{block.tool_use_id} {'failed' if block.is_error else 'returned'}: {text}]"
    if isinstance(block, ThinkingBlock):
        return None  # reasoning is the model's own; the turns it led to are kept
    return f"[{block.type}]"


def transcript(messages: Sequence[Message]) -> str:
    """The covered turns as plain text, one paragraph per message."""
    paragraphs = []
    for message in messages:
        lines = [line for line in map(_line, message.content) if line]
        paragraphs.append(f"{message.role.value.upper()}: " + "\n".join(lines))
    return "\n\n".join(paragraphs)


def summary_request(session_id: str, covered: Sequence[Message]) -> list[Message]:
    """The one USER message the summarizer is sent (never stored)."""
    text = f"{INSTRUCTIONS}\n\n<conversation>\n{transcript(covered)}\n</conversation>"
    return [
        Message(
            id=new_message_id(),
            session_id=session_id,
            role=Role.user,
            content=[TextBlock(type="text", text=text)],
            metadata=MessageMetadata(),
            created_at=datetime.now(UTC),
        )
    ]


def compaction_message(reply: Message, through: str) -> Message:
    """The stored compaction: the summarizer's reply, its text turned into a compaction block.

    The reply's metadata (model, provider, routing, usage and cost) stays: the summary
    was a model call the session paid for. ClientError when the reply has no text.
    """
    summary = "".join(b.text for b in reply.content if isinstance(b, TextBlock)).strip()
    if reply.metadata.status != MessageStatus.complete or not summary:
        raise ClientError(
            f"the summarizer's reply ({reply.metadata.status.value}) holds no summary text; nothing stored",
            message_id=reply.id,
            provider=reply.metadata.provider,
        )
    block = CompactionBlock(
        type="compaction",
        provider=COMPACTOR,
        summary=summary,
        data=_json.dumps({"through": through}).decode(),
    )
    return reply.model_copy(update={"content": [block]})


__all__ = [
    "COMPACTOR",
    "INSTRUCTIONS",
    "SUMMARY_HEADING",
    "Plan",
    "compaction_message",
    "covered_through",
    "plan",
    "project",
    "renamed",
    "replayable",
    "replayed",
    "summary_request",
    "summary_turn",
    "through_of",
    "transcript",
]
