"""Issue 30 item 4: options mis-mapped.

- OpenAI Chat's deprecated `max_tokens` (still the most common spelling recorded) and
  OpenRouter's `max_completion_tokens` are the canonical max_tokens: a 100-token limit
  reaches Anthropic as 100, not the adapter's default; replayed to its own provider, each
  goes back under the name it came in.
- The reasoning effort is canonical (`AdapterOptions.reasoning_effort`, the schema's
  `RequestOptions.reasoning_effort`): read from each provider's field and written as the
  nearest level the target has, with a WARN where the level is not exact; a target that
  takes an effort or a budget (OpenRouter, Gemini) gets the budget when both are set; a
  target with no field (Ollama) gets neither silently.

Bodies are checked with the official SDK types (tests/support/contracts).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.errors import AdapterError
from metis.ids import ToolIdMap
from metis.settings import adapter_fields, request_options
from metis_schema.v3 import ReasoningEffort

from tests.support.contracts import anthropic as anthropic_contract
from tests.support.contracts import gemini as gemini_contract
from tests.support.contracts import mistral as mistral_contract
from tests.support.contracts import openai as openai_contract
from tests.support.contracts import responses as responses_contract

SESSION = "sess_options_effort"
USER = [{"role": "user", "content": "Name a colour."}]
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:openai/gpt-5-mini",
    "mistral": "mistral:mistral-medium-latest",
    "responses": "responses:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
}
CHECKS = {
    "anthropic": anthropic_contract.check_request,
    "openai": openai_contract.check_request,
    "mistral": mistral_contract.check_request,
    "responses": lambda body: responses_contract.check_request(body, open_responses=False),
    "gemini": gemini_contract.check_request,
}


def _import(provider: str, body: dict[str, Any]) -> Any:
    return adapters.get(provider).from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def _send(target: str, imported: Any, **changes: Any) -> dict[str, Any]:
    options = imported.options
    options.model = MODELS[target]
    for name, value in changes.items():
        setattr(options, name, value)
    body: dict[str, Any] = adapters.get(target).to_wire(imported.messages, imported.tools, options)
    if target in CHECKS:
        CHECKS[target](body)
    return body


@pytest.mark.parametrize(
    ("source", "body", "spelled"),
    [
        ("openai", {"model": "gpt-4.1", "messages": USER, "max_tokens": 100}, "max_tokens"),
        (
            "openrouter",
            {"model": "openai/gpt-5-mini", "messages": USER, "max_completion_tokens": 100},
            "max_completion_tokens",
        ),
    ],
)
def test_an_alias_of_max_tokens_is_the_canonical_max_tokens_and_replays_as_spelled(
    source: str, body: dict[str, Any], spelled: str
) -> None:
    imported = _import(source, body)
    assert imported.options.max_tokens == 100
    again = adapters.get(source).to_wire(imported.messages, imported.tools, imported.options)
    assert again == body  # under the name it came in, nothing beside it
    assert _send("anthropic", _import(source, body))["max_tokens"] == 100  # not 8192
    assert _send("gemini", _import(source, body))["generationConfig"]["maxOutputTokens"] == 100
    assert _send("responses", _import(source, body))["max_output_tokens"] == 100


def test_both_spellings_keep_the_current_one_canonical_and_the_other_provider_only() -> None:
    body = {"model": "gpt-4.1", "messages": USER, "max_tokens": 50, "max_completion_tokens": 100}
    imported = _import("openai", body)
    assert imported.options.max_tokens == 100
    assert imported.options.provider_options["openai"]["max_tokens"] == 50
    assert adapters.get("openai").to_wire(imported.messages, imported.tools, imported.options) == body


EFFORT_BODIES: dict[str, tuple[dict[str, Any], str]] = {
    "openai": ({"model": "gpt-5", "messages": USER, "reasoning_effort": "minimal"}, "reasoning_effort"),
    "openrouter": (
        {"model": "openai/gpt-5-mini", "messages": USER, "reasoning": {"effort": "minimal"}},
        "reasoning.effort",
    ),
    "mistral": (
        {"model": "mistral-medium-latest", "messages": USER, "reasoning_effort": "minimal"},
        "reasoning_effort",
    ),
    "responses": (
        {"model": "gpt-5", "input": "Name a colour.", "reasoning": {"effort": "minimal"}},
        "reasoning.effort",
    ),
    "gemini": (
        {
            "contents": [{"role": "user", "parts": [{"text": "Name a colour."}]}],
            "generationConfig": {"thinkingConfig": {"thinkingLevel": "minimal"}},
        },
        "generationConfig.thinkingConfig.thinkingLevel",
    ),
}
"""A "minimal" effort in each provider's own spelling (Anthropic has no minimal: below)."""

WHERE = {
    "anthropic": "output_config.effort",
    **{provider: path for provider, (_, path) in EFFORT_BODIES.items()},
}
SENT_AS = {"anthropic": "low"}
"""Where a target lacks "minimal", the nearest level it has."""


def _at(body: dict[str, Any], path: str) -> Any:
    value: Any = body
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


@pytest.mark.parametrize("source", list(EFFORT_BODIES))
@pytest.mark.parametrize("target", [*WHERE, "ollama"])
def test_reasoning_effort_is_mapped_by_meaning(
    source: str, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    body, path = EFFORT_BODIES[source]
    imported = _import(source, body)
    assert imported.options.reasoning_effort == "minimal"
    # nothing of the effort stays the source's own (a directive on its spelling at most)
    assert set(imported.options.provider_options.get(source, {})) <= {"metis"}
    assert set(imported.options.provider_options) <= {source}
    if target == source:
        again = adapters.get(source).to_wire(imported.messages, imported.tools, imported.options)
        assert _at(again, path) == "minimal"
        return
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        out = _send(target, imported)
    said = [r for r in caplog.records if getattr(r, "block_type", None) == "option"]
    if target == "ollama":
        assert "think" not in out
        assert [r.reason for r in said] == ["reasoning_effort has no ollama request field; not sent"]  # type: ignore[attr-defined]
        return
    assert _at(out, WHERE[target]) == SENT_AS.get(target, "minimal")
    if target in SENT_AS:
        assert [r.reason for r in said] == [  # type: ignore[attr-defined]
            f"{target} has no minimal reasoning effort; sent as the nearest level, low"
        ]
        assert all(r.message_id == "request" and r.session_id == SESSION for r in said)  # type: ignore[attr-defined]
    else:
        assert said == []
    assert _import(target, out).options.reasoning_effort == SENT_AS.get(target, "minimal")


def test_anthropic_effort_and_budget_go_separately_and_one_of_them_where_only_one_is_taken(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,
        "messages": USER,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "output_config": {"effort": "xhigh"},
    }
    imported = _import("anthropic", body)
    assert (imported.options.reasoning_effort, imported.options.thinking_budget) == ("xhigh", 2048)
    again = adapters.get("anthropic").to_wire(imported.messages, imported.tools, imported.options)
    assert {key: again[key] for key in ("max_tokens", "thinking", "output_config")} == {
        key: body[key] for key in ("max_tokens", "thinking", "output_config")
    }
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        gemini = _send("gemini", _import("anthropic", body))
    assert gemini["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 2048, "includeThoughts": True}
    openai = _send("openai", _import("anthropic", body))
    assert openai["reasoning_effort"] == "xhigh"  # its budget has no Chat field: WARN
    reasons = [r.reason for r in caplog.records if getattr(r, "block_type", None) == "option"]  # type: ignore[attr-defined]
    assert reasons == [
        "gemini takes a reasoning effort or a thinking budget, not both; the budget is sent, "
        "reasoning_effort xhigh is not",
        "thinking_budget has no openai request field; not sent",
    ]


def test_a_providers_own_level_stays_its_own() -> None:
    """OpenAI's and Anthropic's "max" is no canonical level: kept for their own provider."""
    body = {"model": "gpt-5", "messages": USER, "reasoning_effort": "max"}
    imported = _import("openai", body)
    assert imported.options.reasoning_effort is None
    assert imported.options.provider_options == {"openai": {"reasoning_effort": "max"}}
    assert adapters.get("openai").to_wire(imported.messages, imported.tools, imported.options) == body


def test_reasoning_effort_is_a_stored_option_and_an_unknown_level_is_refused() -> None:
    options = AdapterOptions(
        model=MODELS["openai"], session_id=SESSION, tool_ids=ToolIdMap(SESSION), reasoning_effort="high"
    )
    stored = request_options(options, "openai")
    assert stored.reasoning_effort == ReasoningEffort.high
    assert adapter_fields(stored)["reasoning_effort"] == "high"
    with pytest.raises(AdapterError, match="not a reasoning effort level"):
        AdapterOptions(
            model=MODELS["openai"], session_id=SESSION, tool_ids=ToolIdMap(SESSION), reasoning_effort="max"
        )


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        (
            "openrouter",
            {
                "model": "openai/gpt-5-mini",
                "messages": USER,
                "reasoning": {"effort": "high", "max_tokens": 2000},
            },
        ),
        (
            "gemini",
            {
                "contents": [{"role": "user", "parts": [{"text": "Name a colour."}]}],
                "generationConfig": {"thinkingConfig": {"thinkingLevel": "high", "thinkingBudget": 2000}},
            },
        ),
    ],
)
def test_an_effort_beside_a_budget_where_one_is_taken_stays_the_providers_own(
    provider: str, body: dict[str, Any]
) -> None:
    """The writer sends the budget alone there; so an import keeps the effort as the
    provider's own option, and the request replays as it was sent."""
    imported = _import(provider, body)
    assert (imported.options.thinking_budget, imported.options.reasoning_effort) == (2000, None)
    again = adapters.get(provider).to_wire(imported.messages, imported.tools, imported.options)
    where = "reasoning" if provider == "openrouter" else "generationConfig"
    assert again[where] == {
        **body[where],
        **(
            {"thinkingConfig": {**body[where]["thinkingConfig"], "includeThoughts": True}}
            if provider == "gemini"
            else {}
        ),
    }
