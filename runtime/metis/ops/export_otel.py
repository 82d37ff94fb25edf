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

Linear output. Each call of a conversation is sent everything the call before it was
sent, plus that call's reply and what came after; written whole, the records of an
N-message session would hold some N²/4 messages (500 GB for 100,000 messages). The
conventions let an instrumentation filter or truncate `gen_ai.input.messages` ("MAY
provide a way for users to filter or truncate input messages"; the messages that remain
keep the order they were sent in), and `gen_ai.conversation.id` ties the records of one
conversation together. So a record's input is truncated at the front: it lists only the
messages after the first `metis.input.messages.omitted` (an integer attribute, present
on every record), and those omitted ones are the first of: the previous record's input
(whole) followed by its output (as an input message; left out when that reply was not
replayed, as a cancelled one is not). The first record, a
compaction's summarizer request, and the call after a compaction (its history was
rewritten) omit nothing. `expand` rebuilds the whole inputs. A record is then as large as
what is new in its call, and the export is written while the session is read a page at
a time, holding the messages since the previous call (and the SYSTEM messages).

A compaction's record needs the turns it covers: the session is read again up to it
(`chat_records`'s `history` callable), once per compaction.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from typing import Any

from metis_schema.v3 import Message, MessageStatus, Role

from . import compact, genai

OMITTED = "metis.input.messages.omitted"
"""How many leading input messages a record leaves out (see module doc)."""

History = Sequence[Message] | Callable[[], Iterable[Message]]
"""A session's messages in order: a list, or a function that reads them (again) from the start."""


def chat_record(session_id: str, sent: Sequence[Message], reply: Message) -> dict[str, Any]:
    """The record of one call: `sent` (the request's history, whole) answered by `reply`."""
    model = reply.metadata.model or "unknown:unknown"
    attributes = genai.request_attributes(session_id, model)
    attributes.update(genai.response_attributes(reply))
    attributes["gen_ai.system_instructions"] = genai.system_instructions(sent)
    attributes["gen_ai.input.messages"] = genai.input_messages(sent)
    attributes[OMITTED] = 0
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
    sent = compact.replayable(history[:i])
    found = compact.covered_through(history[i])
    if found is None:
        return sent
    through = next((n for n, m in enumerate(sent) if m.id == found[1]), len(sent) - 1)
    return compact.summary_request(session_id, [m for m in sent[: through + 1] if m.role != Role.system])


def chat_records(session_id: str, history: History) -> Iterator[dict[str, Any]]:
    """One record per assistant turn of the session, in order (see module doc).

    `history`: the messages, or a function that reads them from the start (the CLI's reads
    the store a page at a time); a function is called once for the walk and once more per
    compaction.
    """
    read: Callable[[], Iterable[Message]] = (lambda: history) if isinstance(history, Sequence) else history
    system: list[Message] = []  # the SYSTEM messages sent (instructions, not turns)
    sent = 0  # non-SYSTEM messages the previous call was sent
    new: list[Message] = []  # non-SYSTEM messages sent since: its reply (when replayed), then more
    carried = 0  # of `new`, how many the previous record's output already shows (0 or 1)
    for i, message in enumerate(read()):
        if message.role == Role.assistant and compact.covered_through(message) is not None:
            before = list(itertools.islice(read(), i + 1))  # the session again, up to here
            yield chat_record(session_id, sent_before(session_id, before, i), message)
            projected = compact.replayable(before)  # the history rewritten: the next call omits nothing
            system = [m for m in projected if m.role == Role.system]
            new, sent, carried = [m for m in projected if m.role != Role.system], 0, 0
            continue
        if message.role == Role.assistant:
            record = chat_record(session_id, [*system, *new], message)  # sent: earlier ones, then `new`
            attributes = record["attributes"]
            attributes["gen_ai.input.messages"] = attributes["gen_ai.input.messages"][carried:]
            attributes[OMITTED] = sent + carried
            yield record
            sent, carried = sent + len(new), 0
            new = []
        if not compact.replayed(message):
            continue
        if message.role == Role.system:
            system.append(message)
        else:
            new.append(message)
            if message.role == Role.assistant:
                carried = 1


def expand(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`records` of one conversation with each `gen_ai.input.messages` whole again: the
    omitted messages put back in front (see module doc), the omission attribute removed."""
    previous: list[Any] = []  # the previous record's whole input, then its output
    for record in records:
        attributes = dict(record["attributes"])
        omitted = attributes.pop(OMITTED, 0)
        whole = previous[:omitted] + list(attributes["gen_ai.input.messages"])
        attributes["gen_ai.input.messages"] = whole
        output = [
            {k: v for k, v in m.items() if k != "finish_reason"} for m in attributes["gen_ai.output.messages"]
        ]
        previous = whole + output
        yield {**record, "attributes": attributes}


__all__ = ["OMITTED", "History", "chat_record", "chat_records", "expand", "sent_before"]
