"""The least a correct projection must do, beside the same orjson floor.

Why: `to_wire`'s target (<= 1.5x orjson loads+dumps of the body) asks Python code that
reads pydantic models to build dicts nearly as fast as orjson builds them in C. These
rows measure references with nothing but the work the OpenAI Chat Completions body of
the benchmark conversation needs, in one loop with every call inlined and exact-type
tests only:

- "bare": the dicts alone, tool ids sent as they are and provider_raw never looked at;
- "required": the same plus the two things no correct adapter can skip: each tool id
  goes through the session's ToolIdMap (spec §6.2: a canonical id is never sent as is
  without the provider's rule being applied), and each ASSISTANT message's provider_raw
  is read to know whether there is something to replay.

Neither is an adapter (no drops, no other block types, no replay) and nothing uses them;
they are the lower bound against which the adapter rows can be read.

The last row does the same for `from_wire_response`: an Anthropic reply with text and
two tool calls made into its canonical Message with only the work the Message itself
requires (see `_minimal_anthropic_reply`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from metis._build import construct
from metis.adapters._shared import validate_text, validate_tool_use
from metis.assembly import default_routing
from metis.invariants import is_clean
from metis.pricing import compute_cost, load_price_table
from metis.usage import TokenCounts
from metis_schema.v2 import (
    Message,
    MessageMetadata,
    MessageStatus,
    Role,
    StopReason,
    TextBlock,
    ToolUseBlock,
    Usage,
)

from bench._common import T0, Row, per_call_interleaved


def _minimal_openai(
    messages: list[Any], wire_id: Callable[[str, str], str] | None = None, *, read_raw: bool = False
) -> list[dict[str, Any]]:
    dumps = orjson.dumps
    out: list[dict[str, Any]] = []
    append = out.append
    user, assistant = Role.user, Role.assistant
    for message in messages:
        role, content = message.role, message.content
        if role is user:
            append({"role": "user", "content": content[0].text})
        elif role is assistant:
            if read_raw and message.metadata.provider_raw is not None:
                raise AssertionError("the benchmark conversation has no provider_raw")
            texts, calls = [], []
            for block in content:
                kind = type(block)
                if kind is TextBlock:
                    texts.append(block.text)
                elif kind is ToolUseBlock:
                    function = {"name": block.name, "arguments": dumps(block.input).decode()}
                    call_id = block.id if wire_id is None else wire_id(block.id, "openai")
                    calls.append({"id": call_id, "type": "function", "function": function})
            wire: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
            if calls:
                wire["tool_calls"] = calls
            append(wire)
        else:
            result = content[0]
            call_id = result.tool_use_id if wire_id is None else wire_id(result.tool_use_id, "openai")
            append({"role": "tool", "tool_call_id": call_id, "content": result.content[0].text})
    return out


def _minimal_anthropic_reply(raw: bytes, ids: Any, session_id: str, created_at: Any) -> Any:
    """An Anthropic reply -> its canonical Message with only the work the result requires:
    the provider's values validated into blocks, canonical tool ids minted and mapped,
    usage priced, the records built directly (as `finish_assistant` builds them), the
    §5.1 screen run. No shape checks, no provider_raw beyond the id, no events."""
    model = "anthropic:claude-sonnet-4-6"
    table = load_price_table()
    body = orjson.loads(raw)
    content = []
    for block in body["content"]:
        if block["type"] == "text":
            content.append(validate_text({"type": "text", "text": block["text"]}))
        else:
            canonical = ids.register_incoming("anthropic", block["id"])
            values = {"type": "tool_use", "id": canonical, "name": block["name"], "input": block["input"]}
            content.append(validate_tool_use(values))
    wire = body["usage"]
    counts = TokenCounts(
        wire["input_tokens"],
        wire["output_tokens"],
        wire.get("cache_read_input_tokens") or 0,
        wire.get("cache_creation_input_tokens") or 0,
    )
    cost = compute_cost(counts, table.models[model])
    usage = construct(
        Usage,
        {
            "input_tokens": counts.input_tokens,
            "output_tokens": counts.output_tokens,
            "cached_input_tokens": counts.cached_input_tokens,
            "cache_creation_input_tokens": counts.cache_creation_input_tokens,
            "cost_usd": cost,
            "pricing_version": table.pricing_version,
            "latency_ms": 0,
        },
    )
    routing = default_routing(model, "default model")
    metadata = construct(
        MessageMetadata,
        {
            "model": model,
            "provider": "anthropic",
            "routing": routing,
            "usage": usage,
            "parent_tool_use_id": None,
            "status": MessageStatus.complete,
            "stop_reason": StopReason.tool_use,
            "critical_blocks": None,
            "provider_raw": {"adapter": "anthropic", "id": body["id"]},
            "user_id": None,
            "team_id": None,
        },
        {"model", "provider", "routing", "usage", "status", "stop_reason", "provider_raw"},
    )
    message = construct(
        Message,
        {
            "id": "01HZ0000000000000000000001",
            "session_id": session_id,
            "role": Role.assistant,
            "content": content,
            "metadata": metadata,
            "created_at": created_at,
            "schema_version": 2,
        },
    )
    if not is_clean(message):
        raise AssertionError("the reference reply must be clean")
    return message


def run() -> list[Row]:
    from metis.ids import ToolIdMap

    from bench.bench_adapters import _conversation

    messages, _ = _conversation(1000, "openai", "openai:gpt-5")
    wire_id = ToolIdMap("sess_bench").outgoing
    body = {"model": "gpt-5", "messages": _minimal_openai(messages, wire_id)}
    best = per_call_interleaved(
        {
            "bare": lambda: _minimal_openai(messages),
            "required": lambda: _minimal_openai(messages, wire_id, read_raw=True),
            "floor": lambda: orjson.loads(orjson.dumps(body)),
        }
    )
    rows = [
        Row(
            "reference",
            f"openai body, minimal inlined projection: {name}",
            best[name] / 1000 * 1e6,
            "µs/msg",
            best["floor"] / 1000 * 1e6,
            "orjson loads+dumps of body",
        )
        for name in ("bare", "required")
    ]
    rows.append(_reply_row())
    return rows


def _reply_row() -> Row:
    import importlib

    from metis.ids import ToolIdMap

    raw = orjson.dumps(importlib.import_module("contracts.anthropic").response_fixture())
    ids = ToolIdMap("sess_bench")
    best = per_call_interleaved(
        {
            "reply": lambda: _minimal_anthropic_reply(raw, ids, "sess_bench", T0),
            "loads": lambda: orjson.loads(raw),
        }
    )
    return Row(
        "reference",
        "anthropic reply (text + 2 tool calls), required work only",
        best["reply"] * 1e6,
        "µs",
        best["loads"] * 1e6,
        "orjson.loads of body",
    )
