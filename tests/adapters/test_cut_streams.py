"""A stream cut after its finish reason never looks finished and free (issue 17, item 3).

Every recorded stream of every provider is cut after its finish reason, at each line end
and once inside a line. Whatever the cut, the reply is CANCELLED, or COMPLETE with the
provider's own usage, or COMPLETE with an estimated usage that says so and costs
something: never COMPLETE with zero tokens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from metis import adapters
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, MessageStatus

from tests.support import golden

ROOT = golden.ROOT
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
}
FINISH = re.compile(rb'"(stop_reason|finish_reason|finishReason|done_reason)"\s*:\s*"')
ESTIMATED_INPUT = 321


def _streams() -> list[tuple[str, Path]]:
    found = []
    for provider in MODELS:
        for path in sorted((ROOT / provider).rglob("stream_*")):
            if ".golden." not in path.name and FINISH.search(path.read_bytes()):
                found.append((provider, path))
    return found


def _assemble(provider: str, body: bytes) -> Message:
    context = RequestContext(
        session_id="s",
        model=MODELS[provider],
        tool_ids=ToolIdMap("s"),
        estimated_input_tokens=ESTIMATED_INPUT,
    )
    return adapters.get(provider).assemble_stream([body], context)


@pytest.mark.parametrize(("provider", "path"), _streams(), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_stream_cut_after_its_finish_reason_is_not_complete_and_free(provider: str, path: Path) -> None:
    data = path.read_bytes()
    start = FINISH.search(data)
    assert start is not None
    full = _assemble(provider, data).metadata.usage
    assert full is not None
    cuts = {i + 1 for i in range(start.start(), len(data) - 1) if data[i : i + 1] == b"\n"} | {
        start.end() + 3
    }
    for cut in sorted(cuts):
        message = _assemble(provider, data[:cut])
        if message.metadata.status != MessageStatus.complete:
            continue
        usage = message.metadata.usage
        assert usage is not None
        if (usage.input_tokens, usage.output_tokens) == (full.input_tokens, full.output_tokens):
            continue  # the provider's own usage had arrived before the cut
        raw = message.metadata.provider_raw or {}
        assert raw.get("usage_estimated") is True, f"cut at {cut}: COMPLETE with unreported usage {usage}"
        assert usage.input_tokens == ESTIMATED_INPUT and usage.output_tokens > 0, f"cut at {cut}"
        if provider != "ollama":  # local models are free; the others are priced
            assert usage.cost_usd > 0, f"cut at {cut}: estimated usage priced at {usage.cost_usd}"


@pytest.mark.parametrize("provider", ["openai", "openrouter"])
def test_the_chat_completions_cut_between_finish_and_usage_is_estimated(provider: str) -> None:
    """The cut the issue measured: the finish_reason chunk arrived, the usage chunk did not."""
    estimated = 0
    for name, path in _streams():
        if name != provider:
            continue
        data = path.read_bytes()
        lines = data.split(b"\n\n")
        usage_at = next(
            i for i, chunk in enumerate(lines) if b'"usage"' in chunk and b'"prompt_tokens"' in chunk
        )
        message = _assemble(provider, b"\n\n".join(lines[:usage_at]) + b"\n\n")
        assert message.metadata.status == MessageStatus.complete
        assert (message.metadata.provider_raw or {}).get("usage_estimated") is True
        assert message.metadata.usage is not None and message.metadata.usage.cost_usd > 0
        estimated += 1
    assert estimated > 0


def test_a_reply_that_reported_its_usage_is_not_marked_estimated() -> None:
    for provider, path in _streams():
        message = _assemble(provider, path.read_bytes())
        if message.metadata.status == MessageStatus.complete:
            assert "usage_estimated" not in (message.metadata.provider_raw or {}), path.name
