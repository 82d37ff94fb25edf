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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from bench._common import Row, per_call_interleaved


def _minimal_openai(
    messages: list[Any], wire_id: Callable[[str, str], str] | None = None, *, read_raw: bool = False
) -> list[dict[str, Any]]:
    from metis_schema.v1 import Role, TextBlock, ToolUseBlock

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
    return [
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
