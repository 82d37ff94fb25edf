"""Builders shared by the store tests (and their subprocesses). Holds no tests itself.

Messages are built canonically and validated, with created_at stepping forward so a
conversation reads in the order it was built.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from metis.ids import new_message_id, new_tool_id
from metis_schema.v1 import Message

T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
MODEL = "anthropic:claude-sonnet-4-6"
_clock = itertools.count(1)


def stamp() -> datetime:
    """A fresh, strictly later time for each message built in this process."""
    return T0 + timedelta(milliseconds=next(_clock))


def message(
    session_id: str,
    role: str,
    content: list[dict[str, Any]],
    metadata: dict[str, Any] | None = None,
    **extra: Any,
) -> Message:
    return Message.model_validate(
        {
            "id": extra.pop("id", None) or new_message_id(),
            "session_id": session_id,
            "role": role,
            "content": content,
            "metadata": metadata or {},
            "created_at": extra.pop("created_at", None) or stamp(),
            "schema_version": 1,
        }
    )


def user(session_id: str, text: str = "Summarize README.md") -> Message:
    return message(session_id, "user", [{"type": "text", "text": text}])


def assistant_meta(status: str = "complete", model: str = MODEL, **more: Any) -> dict[str, Any]:
    provider = model.split(":", 1)[0]
    return {
        "model": model,
        "provider": provider,
        "routing": {"mode": "default", "chosen_model": model, "reason": "workspace default"},
        "usage": {
            "input_tokens": 12,
            "output_tokens": 34,
            "cost_usd": "0.000546",
            "pricing_version": "2026-05-08",
            "latency_ms": 800,
        },
        "status": status,
        **more,
    }


def assistant(session_id: str, text: str = "Done.", *, status: str = "complete", **more: Any) -> Message:
    return message(session_id, "assistant", [{"type": "text", "text": text}], assistant_meta(status, **more))


def tool_call(
    session_id: str, *, calls: int = 1, status: str = "complete", tool_id: str | None = None, **more: Any
) -> Message:
    """An ASSISTANT message with a line of text and `calls` read_file tool_use blocks."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "I'll read the file."}]
    for i in range(calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id if tool_id and i == 0 else new_tool_id(),
                "name": "read_file",
                "input": {"path": f"file{i}.md"},
            }
        )
    return message(session_id, "assistant", blocks, assistant_meta(status, **more))


def tool_ids_of(msg: Message) -> list[str]:
    return [b.id for b in msg.content if b.type == "tool_use"]


def tool_result(
    session_id: str, tool_use_id: str, text: str = "# Project Foo", *, is_error: bool = False
) -> Message:
    return message(
        session_id,
        "tool",
        [
            {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": [{"type": "text", "text": text}],
                "is_error": is_error,
            }
        ],
        {"parent_tool_use_id": tool_use_id},
    )


def conversation(session_id: str, turns: int) -> list[Message]:
    """`turns` rounds of user, assistant tool call, tool result, assistant answer."""
    out: list[Message] = []
    for i in range(turns):
        call = tool_call(session_id)
        out += [
            user(session_id, f"question {i}"),
            call,
            tool_result(session_id, tool_ids_of(call)[0], f"result {i}"),
            assistant(session_id, f"answer {i}"),
        ]
    return out


def every_shape(session_id: str) -> list[Message]:
    """One valid conversation using every block type and optional field the schema has."""
    call = tool_call(session_id, calls=2, stop_reason="tool_use", critical_blocks=[0])
    first, second = tool_ids_of(call)
    thinking = message(
        session_id,
        "assistant",
        [
            {"type": "thinking", "text": "Let me think about ünïcode ✓.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "b64blob=="},
            {"type": "text", "text": ""},
        ],
        assistant_meta(
            provider_raw={"adapter": "anthropic", "nested": {"n": [1, 2.5, None, True]}},
            user_id="usr_1",
            team_id="team_1",
            routing={
                "mode": "pattern",
                "chosen_model": MODEL,
                "reason": "pattern store",
                "rule_name": "r1",
                "confidence": 0.75,
                "alternatives_considered": ["openai:gpt-5"],
            },
            usage={
                "input_tokens": 1,
                "output_tokens": 2,
                "cached_input_tokens": 3,
                "cache_creation_input_tokens": 4,
                "cost_usd": "0.0000001",
                "pricing_version": "2026-05-08",
                "latency_ms": 5,
            },
        ),
    )
    image = {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"}
    return [
        message(session_id, "system", []),
        message(session_id, "system", [{"type": "text", "text": "You are terse."}]),
        message(
            session_id,
            "user",
            [
                {"type": "text", "text": "look"},
                image,
                {
                    "type": "image",
                    "source": {"kind": "url", "data": "https://x.test/a.png"},
                    "media_type": "image/png",
                },
                {
                    "type": "image",
                    "source": {"kind": "file_ref", "data": "img/a.png"},
                    "media_type": "image/png",
                },
            ],
        ),
        call,
        message(
            session_id,
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": first,
                    "content": [{"type": "text", "text": "ok"}, image],
                }
            ],
            {"parent_tool_use_id": first},
        ),
        tool_result(session_id, second, "boom", is_error=True),
        thinking,
        assistant(session_id, "bye", stop_reason="end_turn"),
    ]


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def files_bytes(path: Path) -> bytes:
    """The database file and its WAL/SHM companions, concatenated (what is on disk)."""
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = Path(str(path) + suffix)
        if part.exists():
            out += part.read_bytes()
    return out
