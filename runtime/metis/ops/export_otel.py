"""`metis export --format otel`: a stored session as OpenTelemetry GenAI chat records.

One record per assistant turn, i.e. per model call the session made: the span name and
attributes a GenAI instrumentation would have recorded for that call (semantic
conventions `genai.SEMCONV_VERSION`), with the content attributes filled in —
`gen_ai.system_instructions`, `gen_ai.input.messages` (the history that call was sent:
what the client replays, so cancelled turns before it are left out) and
`gen_ai.output.messages` (the turn) — plus usage, cost and model. A compaction's record
shows the summarizer's request: the transcript of the turns it covers. The structured
attributes are JSON values here; a live span carries them as JSON strings (`otel`),
since span attributes cannot nest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from metis_schema.v3 import Message, MessageStatus, Role

from . import compact, genai


def replayable(history: Sequence[Message]) -> list[Message]:
    """The messages a provider is sent: the client's rule (`SessionCore.replayable`)."""
    from ..client._session import SessionCore

    return SessionCore.replayable(history)


def chat_record(session_id: str, sent: Sequence[Message], reply: Message) -> dict[str, Any]:
    """The record of one call: `sent` (the request's history) answered by `reply`."""
    model = reply.metadata.model or "unknown:unknown"
    attributes = genai.request_attributes(session_id, model)
    attributes.update(genai.response_attributes(reply))
    attributes["gen_ai.system_instructions"] = genai.system_instructions(sent)
    attributes["gen_ai.input.messages"] = genai.input_messages(sent)
    attributes["gen_ai.output.messages"] = genai.output_messages(reply)
    usage = reply.metadata.usage
    latency = timedelta(milliseconds=usage.latency_ms if usage is not None else 0)
    return {
        "name": f"chat {attributes['gen_ai.request.model']}",
        "kind": "CLIENT",
        "schema_url": genai.SCHEMA_URL,
        "start_time": (reply.created_at - latency).isoformat(),
        "end_time": reply.created_at.isoformat(),
        "status": "ERROR" if reply.metadata.status == MessageStatus.error else "UNSET",
        "attributes": attributes,
    }


def sent_before(session_id: str, history: Sequence[Message], i: int) -> list[Message]:
    """What the call that produced `history[i]` was sent: the projection of what precedes
    it, or, for a compaction, the summarizer's request over the turns it covers."""
    sent = replayable(history[:i])
    found = compact.covered_through(history[i])
    if found is None:
        return sent
    through = next((n for n, m in enumerate(sent) if m.id == found[1]), len(sent) - 1)
    return compact.summary_request(session_id, [m for m in sent[: through + 1] if m.role != Role.system])


def chat_records(session_id: str, history: Sequence[Message]) -> Iterator[dict[str, Any]]:
    """One record per assistant turn of the session, in order (see module doc)."""
    for i, message in enumerate(history):
        if message.role == Role.assistant:
            yield chat_record(session_id, sent_before(session_id, history, i), message)


__all__ = ["chat_record", "chat_records", "replayable", "sent_before"]
