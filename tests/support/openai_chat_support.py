"""Test support shared by the OpenAI and OpenRouter adapter tests (one wire, two dialects).

- recorded-shape wire inputs under tests/golden/<provider>/ (`recorded`), compared with
  their expected outputs by tests/support/golden.py's one harness (which also writes the
  error document); the Chat documents compared (`import_document`, `events_document`) are
  written here once;
- deterministic canonical tool ids (`fixed_tool_ids` fixture) so goldens are stable;
- `normalize_tool_ids`: canonical ids replaced by the provider id they map to, to compare two
  parses of the same wire (each parse mints its own canonical ids);
- canonical message wrappers with fixed ids and times (over `messages.build_message`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from metis import ids as ids_module
from metis.adapters import AdapterOptions, WireImport
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    ContentBlock,
    Message,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    SideEffects,
    StreamEvent,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    Usage,
)

from tests.support import golden
from tests.support.messages import build_message

FIXED_TIME = datetime(2026, 11, 22, 12, 0, 0, 123456, tzinfo=UTC)
SESSION = "sess_openai_chat_tests"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_TOOL_ID = re.compile(r"tu_[0-9A-HJKMNP-TV-Z]{26}")


def ulid(n: int, prefix: str = "01JD") -> str:
    """A valid, fixed ULID numbered `n` (readable in goldens)."""
    digits = []
    for _ in range(26 - len(prefix)):
        n, r = divmod(n, 32)
        digits.append(_CROCKFORD[r])
    return prefix + "".join(reversed(digits))


def warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The adapter's WARNs (not the catalog's, which says once per process what it assumed)."""
    return [r for r in caplog.records if r.levelno == logging.WARNING and r.name != "metis.catalog"]


def tid(n: int) -> str:
    """A fixed canonical tool id."""
    return "tu_" + ulid(n, prefix="01JT")


@pytest.fixture
def fixed_tool_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Canonical tool ids minted in order: tu_01JT...0001, ...0002 (goldens stay stable)."""
    counter = itertools.count(1001)
    monkeypatch.setattr(ids_module, "new_tool_id", lambda: tid(next(counter)))
    yield


def recorded(provider: str, name: str) -> Any:
    """A recorded-shape wire input: parsed JSON for .json, raw bytes otherwise."""
    data = golden.read_input(provider, name)
    return json.loads(data) if name.endswith(".json") else data


def import_document(imported: WireImport) -> dict[str, Any]:
    """A WireImport as the `.import.golden.json` document: message ids (fresh each import)
    written as `<messages[i]>`, creation times left out, options that are set."""
    options = imported.options
    document = {
        "model": options.model,
        "messages": [
            m.model_dump(mode="json", exclude_none=True, exclude={"created_at"}) for m in imported.messages
        ],
        "tools": [t.model_dump(mode="json", exclude_none=True) for t in imported.tools],
        "options": {
            key: value
            for key in (
                "max_tokens",
                "temperature",
                "top_p",
                "stop",
                "stream",
                "tool_choice",
                "thinking_budget",
                "reasoning_effort",
                "output_schema",
                "provider_options",
            )
            if (value := getattr(options, key)) not in (None, False, {})
        },
        "dropped": imported.dropped,
    }
    text = json.dumps(document, default=dataclasses.asdict)  # an OutputSchema
    for i, message in enumerate(imported.messages):
        text = text.replace(message.id, f"<messages[{i}]>")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def events_document(events: list[StreamEvent]) -> list[dict[str, Any]]:
    """StreamEvents as the `.events.golden.json` document."""
    return [event.model_dump(mode="json", exclude_none=True) for event in events]


def canonical(message: Message) -> dict[str, Any]:
    """Canonical JSON of a message (the persistence form)."""
    dumped: dict[str, Any] = message.model_dump(mode="json", exclude_none=True)
    return dumped


def normalize_tool_ids(value: Any, tool_ids: ToolIdMap, provider: str) -> Any:
    """Replace canonical tool ids (in strings and keys) by `<provider id>` from the map."""

    def swap(text: str) -> str:
        return _TOOL_ID.sub(lambda m: f"<{tool_ids.provider_id(m.group(0), provider) or 'unbound'}>", text)

    if isinstance(value, dict):
        return {swap(k): normalize_tool_ids(v, tool_ids, provider) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize_tool_ids(v, tool_ids, provider) for v in value]
    return swap(value) if isinstance(value, str) else value


def chunkings(data: bytes) -> dict[str, list[bytes]]:
    """The same body split several ways: whole, 1-byte, 7-byte, 64-byte and per line."""
    return {
        "whole": [data],
        "1-byte": [data[i : i + 1] for i in range(len(data))],
        "7-byte": [data[i : i + 7] for i in range(0, len(data), 7)],
        "64-byte": [data[i : i + 64] for i in range(0, len(data), 64)],
        "lines": data.splitlines(keepends=True),
    }


def context(model: str, tool_ids: ToolIdMap | None = None, **kw: Any) -> RequestContext:
    """A RequestContext with a fixed message id and time."""
    return RequestContext(
        session_id=SESSION,
        model=model,
        tool_ids=tool_ids if tool_ids is not None else ToolIdMap(SESSION),
        message_id=ulid(999),
        created_at=FIXED_TIME,
        **kw,
    )


def options(model: str, tool_ids: ToolIdMap, **kw: Any) -> AdapterOptions:
    return AdapterOptions(model=model, session_id=SESSION, tool_ids=tool_ids, **kw)


def msg(n: int, role: Role, content: list[ContentBlock], **metadata: Any) -> Message:
    """A canonical message with a fixed id (`ulid(n)`) and time."""
    return build_message(role, content, session_id=SESSION, id=ulid(n), created_at=FIXED_TIME, **metadata)


def assistant(
    n: int, content: list[ContentBlock], *, model: str, provider_raw: dict[str, Any] | None = None
) -> Message:
    """A COMPLETE assistant message produced by `model` (metadata as the invariants require)."""
    return msg(
        n,
        Role.assistant,
        content,
        model=model,
        provider=model.split(":", 1)[0],
        routing=RoutingDecisionRecord(mode=RoutingMode.default, chosen_model=model, reason="test"),
        usage=Usage(
            input_tokens=10,
            output_tokens=5,
            cost_usd=Decimal("0"),
            pricing_version="2026-11-01",
            latency_ms=1,
        ),
        provider_raw=provider_raw,
    )


def tool_result(n: int, tool_use_id: str, content: list[ContentBlock], *, is_error: bool = False) -> Message:
    block = ToolResultBlock(type="tool_result", tool_use_id=tool_use_id, content=content, is_error=is_error)
    return msg(n, Role.tool, [block], parent_tool_use_id=tool_use_id)


def text(value: str) -> TextBlock:
    return TextBlock(type="text", text=value)


WEATHER_TOOL = ToolDefinition(
    name="get_weather",
    description="Current weather for a city: temperature, conditions and wind.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
    side_effects=SideEffects.network,
    requires_workspace=False,
)
READ_TOOL = ToolDefinition(
    name="read_file",
    description="Read a file from the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    side_effects=SideEffects.read,
)


def wire_equivalent(body: Any) -> Any:
    """A body with one-text-part content written as its string (the two forms mean the same),
    and without a top-level `stream: false` (the API's default; whether a request streams is
    the client's choice, `AdapterOptions.stream`, not an option an import carries)."""
    if isinstance(body, dict) and body.get("stream") is False and "messages" in body:
        body = {k: v for k, v in body.items() if k != "stream"}
    if isinstance(body, dict):
        out = {k: wire_equivalent(v) for k, v in body.items()}
        content = out.get("content")
        if (
            isinstance(content, list)
            and len(content) == 1
            and isinstance(content[0], dict)
            and set(content[0]) == {"type", "text"}
        ):
            out["content"] = content[0]["text"]
        return out
    if isinstance(body, list):
        return [wire_equivalent(v) for v in body]
    return body
