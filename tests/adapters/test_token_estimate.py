"""The one pre-flight token estimator (`adapters._kit.estimate`), fed by each provider's row.

Every adapter's `estimate_input_tokens` is the base adapter asking its facts row
(`ProviderFacts.tokens`): one walk of the canonical messages and tools, the provider's
numbers applied. tests/golden/estimate/numbers.golden.json holds what each provider's own
estimator (five separate functions before the rows) said for every canonical conversation
the goldens hold (each request import, each reply alone, one conversation of non-ASCII
text and JSON): the row-driven estimator must say the same, number for number. Each
provider's measured error against real usage stays in its own test
(test_anthropic_estimate.py, test_gemini_adapter.py, test_ollama_adapter.py,
test_openai_adapter.py, test_openrouter_adapter.py, test_responses_adapter.py).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.adapters._kit.base import Adapter
from metis.adapters._kit.estimate import Thinking, estimate
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, ToolDefinition

from tests.support import golden

Case = tuple[str, list[Message], list[ToolDefinition]]


def _unicode_case() -> Case:
    """Text, thinking, a call and a tool whose JSON holds non-ASCII characters: the
    providers measure JSON differently (escaped, spaced, compact), so this pins each one."""
    session = "sess_estimate_unicode"
    meta = {"provider": "openrouter", "model": "openrouter:anthropic/claude-sonnet-4", "status": "complete"}
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Réponds en français, s'il te plaît."}]},
        {"role": "user", "content": [{"type": "text", "text": "東京の天気は? ☀️"}]},
        {
            "role": "assistant",
            "metadata": meta,
            "content": [
                {"type": "thinking", "text": "L'utilisateur veut la météo à Tōkyō.", "signature": None},
                {
                    "type": "tool_use",
                    "id": "tu_01JE0000000000000000000T01",
                    "name": "meteo",
                    "input": {"ville": "東京", "unités": "°C", "jours": [1, 2.5, 3]},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_01JE0000000000000000000T01",
                    "content": [{"type": "text", "text": "晴れ、23°C — ensoleillé"}],
                }
            ],
        },
    ]
    built = _messages([{"session_id": session, "schema_version": 3, **message} for message in messages])
    tool = ToolDefinition(
        name="meteo",
        side_effects="read",
        description="Le temps qu'il fait — 天気",
        input_schema={
            "type": "object",
            "properties": {"ville": {"type": "string", "description": "Ville (都市)"}},
        },
    )
    return "unicode", built, [tool]


def _messages(docs: list[dict[str, Any]]) -> list[Message]:
    """Messages from documents whose ids and times may be an import golden's placeholders
    (`#0`, `<import time>`): fixed ones instead (the estimate reads neither)."""
    out: list[Message] = []
    for index, doc in enumerate(docs):
        fixed = {"metadata": {}, **doc, "id": f"01JE{index:022d}", "created_at": "2026-01-01T00:00:00Z"}
        out.append(Message.model_validate(fixed))
    return out


def _load(path: Path) -> Any:
    """A golden document, its placeholder tool ids (`tu_#0`) made valid (no id is counted)."""
    return orjson.loads(re.sub(rb'"tu_#(\d+)"', lambda m: b'"tu_01JF%022d"' % int(m[1]), path.read_bytes()))


def corpus() -> list[Case]:
    """Every canonical conversation the goldens hold: each import's messages and tools,
    each canonical reply alone, and `_unicode_case`."""
    cases: list[Case] = []
    for path in sorted(golden.ROOT.glob("*/*.import.golden.json")):
        doc = _load(path)
        if isinstance(doc, list):  # a golden of the messages alone
            doc = {"messages": doc}
        messages = _messages(doc.get("messages", []))
        tools = [ToolDefinition.model_validate(t) for t in doc.get("tools", [])]
        cases.append((f"{path.parent.name}/{path.name}", messages, tools))
    for path in sorted(golden.ROOT.glob("*/*.canonical.golden.json")):
        reply = _load(path)
        if isinstance(reply, dict) and "role" in reply:  # a reply (other canonical goldens hold tools)
            cases.append((f"{path.parent.name}/{path.name}", _messages([reply]), []))
    cases.extend(_measured())
    cases.append(_unicode_case())
    return cases


def _measured() -> list[Case]:
    """The requests each estimator's error was measured on (imported by their own adapter)."""
    samples = orjson.loads((golden.folder("anthropic") / "token_samples.json").read_bytes())["samples"]
    bodies = [("anthropic", s["cassette"], s["request"]) for s in samples]
    gemini = orjson.loads((golden.folder("gemini") / "estimate_cases.json").read_bytes())["cases"]
    bodies += [("gemini", c["name"], c["request"]) for c in gemini]
    ollama = orjson.loads((golden.folder("ollama") / "estimate_docs.json").read_bytes())
    bodies += [("ollama", c["source"], c["request"]) for c in ollama]
    cases: list[Case] = []
    for provider, name, body in bodies:
        imported = adapters.get(provider).from_wire_request(
            body, session_id="sess_est", tool_ids=ToolIdMap("sess_est")
        )
        cases.append((f"{provider}/measured/{name}", imported.messages, imported.tools))
    return cases


def test_every_provider_estimates_every_golden_conversation_as_before() -> None:
    numbers = {
        name: {
            provider: adapters.get(provider).estimate_input_tokens(messages, tools)
            for provider in adapters.names()
        }
        for name, messages, tools in corpus()
    }
    assert len(numbers) > 80
    golden.check("estimate", "numbers.golden.json", numbers)


def test_no_adapter_has_an_estimator_of_its_own() -> None:
    """The base adapter asks the row: no adapter overrides `estimate_input_tokens`, and every
    registered provider has a row with its measured error stated beside its numbers."""
    for provider in adapters.names():
        adapter = adapters.get(provider)
        assert type(adapter).estimate_input_tokens is Adapter.estimate_input_tokens, provider
        row = adapter.facts.tokens
        assert row is not None and row.measured, provider


def test_a_row_is_all_a_provider_needs() -> None:
    """A provider's estimate follows its row with no code of its own: a copy of Gemini's
    row with other numbers, on an adapter whose facts row carries it, counts by them."""
    gemini = adapters.get("gemini")
    row = gemini.facts.tokens
    assert row is not None
    cheaper = dataclasses.replace(row, image=100, message=10, request=7)

    class Cheaper(type(gemini)):  # type: ignore[misc]
        facts = dataclasses.replace(gemini.facts, tokens=cheaper)

    _, messages, tools = _unicode_case()
    image = _messages(
        [
            {
                "session_id": "sess_estimate_unicode",
                "schema_version": 3,
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "media_type": "image/png",
                        "source": {"kind": "url", "data": "https://example.test/a.png"},
                    }
                ],
            }
        ]
    )
    before = gemini.estimate_input_tokens([*messages, *image], tools)
    after = Cheaper().estimate_input_tokens([*messages, *image], tools)
    assert before - after == (258 - 100) + 5 * (3 - 10) - 7
    assert estimate(cheaper, "gemini", [*messages, *image], tools) == after


@pytest.mark.parametrize("provider", ["openai", "openrouter", "mistral"])
def test_a_chat_dialect_counts_reasoning_as_it_replays_it(provider: str) -> None:
    """Chat dialects send reasoning back only to the provider that wrote it: their row
    counts only their own replies' thinking, and says so only where the dialect replays."""
    adapter = adapters.get(provider)
    facts = adapter.facts
    replays = facts.reasoning_details or facts.replays_plain_reasoning or facts.thinking_parts
    row = adapter.facts.tokens
    assert row is not None
    assert row.thinking is (Thinking.own if replays else Thinking.none)
