"""Adapter benchmarks, per provider, each beside a floor measured in the same run.

- `to_wire` of a 1,000-message tool-heavy conversation, in µs per message, beside the
  orjson `loads`+`dumps` time of the body it produced (target <= 1.5x that floor);
- `from_wire_response` of one reply with text and two tool calls (targets: <= 20 µs, and
  <= 10x `orjson.loads` of the body);
- peak memory of the 1,000-message `to_wire` (tracemalloc);
- linearity: µs/message at 32,000 messages over at 500, beside the orjson floor's own
  growth on the same bodies (target <= 1.5x that growth).

Each measurement and its floor are timed in alternating rounds, best of seven each, so a
busy spell of the machine hits both (`per_call_interleaved`).
"""

from __future__ import annotations

import importlib
from typing import Any

import orjson

from bench._common import T0, Row, Turn, conversation, peak_memory, per_call_interleaved

PROVIDERS = ["anthropic", "openai", "gemini", "ollama", "openrouter"]
SMALL, LARGE = 500, 32_000
"""Conversation lengths of the linearity row (see `_provider_rows`)."""


def _conversation(n: int, provider: str, model: str) -> tuple[list[Any], list[Any]]:
    """`n` messages of rounds of user, assistant + tool_use, tool result (all at T0), and the tool."""
    from metis_schema.v2 import ToolDefinition

    tools = [
        ToolDefinition(
            name="read_file",
            description="Read a file",
            side_effects="read",
            input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ]
    usage = {
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_usd": "0.0006",
        "pricing_version": "2026-05-08",
        "latency_ms": 800,
    }
    routing = {"mode": "default", "chosen_model": model, "reason": "bench"}

    def turn(call: str) -> Turn:
        result = [{"type": "text", "text": "# Project Foo\n\nA tool for things." * 3}]
        return [
            ("user", [{"type": "text", "text": "Summarize README.md please"}], {}),
            (
                "assistant",
                [
                    {"type": "text", "text": "I'll read the file."},
                    {"type": "tool_use", "id": call, "name": "read_file", "input": {"path": "README.md"}},
                ],
                {"model": model, "provider": provider, "routing": routing, "usage": usage},
            ),
            (
                "tool",
                [{"type": "tool_result", "tool_use_id": call, "content": result}],
                {"parent_tool_use_id": call},
            ),
        ]

    return conversation(n, turn), tools


def _provider_rows(provider: str) -> list[Row]:
    import metis.adapters
    from metis.adapters import AdapterOptions
    from metis.assembly import RequestContext
    from metis.catalog import load_catalog
    from metis.ids import ToolIdMap

    adapter = metis.adapters.get(provider)
    model = load_catalog().for_provider(provider)[0].id
    rows: list[Row] = []

    def fresh_options() -> AdapterOptions:
        """Options with a new, empty ToolIdMap (no tool id's wire id minted yet)."""
        return AdapterOptions(model=model, session_id="sess_bench", tool_ids=ToolIdMap("sess_bench"))

    def wire_times(messages: list[Any], tools: list[Any]) -> tuple[float, float]:
        """(to_wire seconds, orjson loads+dumps seconds of its body), in turns."""
        options = fresh_options()
        body = adapter.to_wire(messages, tools, options)
        best = per_call_interleaved(
            {
                "to_wire": lambda: adapter.to_wire(messages, tools, options),
                "floor": lambda: orjson.loads(orjson.dumps(body)),
            }
        )
        return best["to_wire"], best["floor"]

    messages, tools = _conversation(1000, provider, model)
    seconds, floor = wire_times(messages, tools)
    rows.append(
        Row(
            provider,
            "to_wire 1,000 msgs",
            seconds / 1000 * 1e6,
            "µs/msg",
            floor / 1000 * 1e6,
            "orjson loads+dumps of body",
            "<= 1.5x floor",
            seconds <= 1.5 * floor,
        )
    )
    # The same conversation, with fresh options: the timing left its map holding every
    # tool id's minted wire id, and the peak measured is a first request's, minting included.
    options = fresh_options()
    rows.append(
        Row(
            provider,
            "to_wire 1,000 msgs peak memory",
            peak_memory(lambda: adapter.to_wire(messages, tools, options)) / 1024,
            "KiB",
        )
    )
    # Linearity: per-message cost at LARGE messages over at SMALL, judged against the same
    # growth of the floor on the same bodies. Per-message cost steps up once a
    # conversation outgrows the CPU caches, for orjson too, but at different lengths (the
    # canonical models take several times the memory of the wire body): the two lengths
    # are far enough apart that both have taken their step, so what remains is growth of
    # the code's own. Quadratic work would show as a 64-fold growth.
    small, small_floor = wire_times(*_conversation(SMALL, provider, model))
    large, large_floor = wire_times(*_conversation(LARGE, provider, model))
    growth = (large / LARGE) / (small / SMALL)
    floor_growth = (large_floor / LARGE) / (small_floor / SMALL)
    rows.append(
        Row(
            provider,
            f"to_wire µs/msg growth, {LARGE:,} vs {SMALL:,} msgs",
            growth,
            "x",
            floor_growth,
            "same growth of the orjson floor",
            "<= 1.5x the floor's growth (linear)",
            growth <= 1.5 * floor_growth,
        )
    )

    fixture = importlib.import_module(f"contracts.{provider}").response_fixture()
    raw = orjson.dumps(fixture)
    ids = ToolIdMap("sess_bench")
    context = RequestContext(
        session_id="sess_bench",
        model=model,
        tool_ids=ids,
        message_id="01HZ0000000000000000000001",
        created_at=T0,
    )
    best = per_call_interleaved(
        {
            "parse": lambda: adapter.from_wire_response(orjson.loads(raw), context),
            "loads": lambda: orjson.loads(raw),
        }
    )
    parse, loads = best["parse"], best["loads"]
    rows.append(
        Row(
            provider,
            "from_wire_response text + 2 tool calls",
            parse * 1e6,
            "µs",
            loads * 1e6,
            "orjson.loads of body",
            "<= 20 µs and <= 10x floor",
            parse <= 20e-6 and parse <= 10 * loads,
        )
    )
    return rows


def run() -> list[Row]:
    import logging

    logging.getLogger("metis").setLevel(logging.ERROR)  # lossy-projection WARNs are not measured here
    rows: list[Row] = []
    for provider in PROVIDERS:
        try:
            rows.extend(_provider_rows(provider))
        except ImportError as exc:  # an adapter not built yet: say so in the table
            rows.append(Row(provider, f"not available: {exc}", 0.0, ""))
    return rows
