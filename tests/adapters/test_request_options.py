"""The one options rule (adapters/_kit/options.py), for every provider pair and through `metis convert`.

Each provider's request below sets every canonical option it can say (max tokens,
temperature, top_p, stop, a named tool choice, a thinking budget, a structured-output
schema) in its own spelling, plus options only it has. Converted to every provider:

- the canonical options arrive in the target's spelling (read back by the target's own
  importer) wherever both providers can say them;
- the provider-only options reach the same provider as sent, and no other: for any other
  target they are absent from the body and listed as dropped, in the JSON report and on
  stderr (never "nothing dropped").

And a recorded request of each golden folder, imported and written back to its own
provider, keeps every option.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from metis import adapters
from metis.adapters import AdapterOptions, OutputSchema
from metis.adapters._kit.options import option_fields
from metis.cli import cli
from metis.client import Client
from metis.ids import ToolIdMap
from metis.store import Store

from tests.support import golden
from tests.support.client_support import KEYS, FakeTime, ScriptedProvider, json_reply, ok_body
from tests.support.client_support import PROVIDERS as CLIENT_PROVIDERS

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
    "required": ["city", "celsius"],
    "additionalProperties": False,
}
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

REQUESTS: dict[str, dict[str, Any]] = {
    "anthropic": {
        "model": "claude-sonnet-4-6",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"name": "get_weather", "description": "Weather.", "input_schema": PARAMETERS}],
        "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        "max_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}, "effort": "high"},
        "metadata": {"user_id": "u-42"},
        "top_k": 5,
    },
    "openai": {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_completion_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
        },
        "logit_bias": {"50256": -100},
        "seed": 7,
        "stream": True,
        "stream_options": {"include_usage": True, "include_obfuscation": False},
    },
    "openrouter": {
        "model": "anthropic/claude-sonnet-4.6",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "reasoning": {"max_tokens": 2048, "exclude": True},
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
        },
        "provider": {"order": ["anthropic"], "allow_fallbacks": False},
        "transforms": ["middle-out"],
    },
    "mistral": {
        "model": "mistral-medium-latest",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
        },
        "random_seed": 7,
        "safe_prompt": True,
    },
    "responses": {
        "model": "gpt-5",
        "input": "Weather in Paris?",
        "tools": [{"type": "function", "name": "get_weather", "parameters": PARAMETERS, "strict": False}],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "max_output_tokens": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "text": {
            "format": {"type": "json_schema", "name": "weather", "schema": SCHEMA, "strict": True},
            "verbosity": "low",
        },
        "reasoning": {"effort": "low"},
        "metadata": {"run": "r-1"},
    },
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": PARAMETERS}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        "generationConfig": {
            "maxOutputTokens": 4096,
            "temperature": 0.5,
            "topP": 0.9,
            "stopSequences": ["END"],
            "thinkingConfig": {"thinkingBudget": 2048, "includeThoughts": True},
            "responseMimeType": "application/json",
            "responseJsonSchema": SCHEMA,
            "topK": 40,
        },
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}],
    },
    "ollama": {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": PARAMETERS}}],
        "options": {"num_predict": 4096, "temperature": 0.5, "top_p": 0.9, "stop": ["END"], "num_ctx": 8192},
        "format": SCHEMA,
        "keep_alive": "5m",
        "stream": False,
    },
}
"""One request per provider: canonical options in its spelling, and options only it has."""

PROVIDER_ONLY: dict[str, dict[str, Any]] = {
    "anthropic": {
        "tool_choice.disable_parallel_tool_use": True,
        "metadata.user_id": "u-42",
        "top_k": 5,
    },
    "openai": {"logit_bias.50256": -100, "seed": 7, "stream_options.include_obfuscation": False},
    "openrouter": {
        "reasoning.exclude": True,
        "provider.order": ["anthropic"],
        "provider.allow_fallbacks": False,
        "transforms": ["middle-out"],
    },
    "mistral": {"random_seed": 7, "safe_prompt": True},
    "responses": {"text.verbosity": "low", "metadata.run": "r-1"},
    "gemini": {
        "generationConfig.topK": 40,
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}],
    },
    "ollama": {"options.num_ctx": 8192, "keep_alive": "5m"},
}
"""What each request above sets that only its provider has, by dotted path."""

CANONICAL = {
    "max_tokens": 4096,
    "temperature": 0.5,
    "top_p": 0.9,
    "stop": ["END"],
    "tool_choice": "get_weather",
}
THINKING = 2048
SAYS_THINKING_BUDGET = {"anthropic", "openrouter", "gemini"}
"""Providers whose wire states a thinking budget as a number."""
EFFORT = {"anthropic": "high", "responses": "low"}
"""The reasoning effort each request above sets (Anthropic `output_config.effort`, Responses
`reasoning.effort`): canonical since issue 30."""
NO_EFFORT = {"ollama"}
EFFORT_OR_BUDGET = {"openrouter", "gemini"}
"""Targets that take an effort or a budget per request: given both, the budget."""
NO_STOP = {"responses"}
NO_TOOL_CHOICE = {"ollama"}
PROVIDERS = list(REQUESTS)
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "responses": "responses:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
}
PROVIDER_ONLY_FIELDS: dict[str, dict[str, Any]] = {
    "openai": {"logit_bias": {"50256": -100}, "seed": 7, "stream_options": {"include_obfuscation": False}},
    "gemini": {"safetySettings": PROVIDER_ONLY["gemini"]["safetySettings"]},
    "ollama": {"options": {"num_ctx": 8192}, "keep_alive": "5m"},
}
"""`PROVIDER_ONLY` as the nested fields an import keeps (for the requests without a schema)."""


def _at(body: dict[str, Any], path: str) -> Any:
    value: Any = body
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _convert(tmp_path: Path, source: str, target: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    src = tmp_path / f"{source}.json"
    src.write_text(json.dumps(REQUESTS[source]))
    report = tmp_path / "report.json"
    args = ["convert", "--from", source, "--to", target, str(src)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with_report = CliRunner().invoke(cli, [*args[:-1], "--report", str(report), str(src)])
    assert with_report.exit_code == 0, with_report.output
    return json.loads(result.stdout), json.loads(report.read_text()), result.stderr


def _imported(provider: str, body: dict[str, Any]) -> AdapterOptions:
    return adapters.get(provider).from_wire_request(body, session_id="s", tool_ids=ToolIdMap("s")).options


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in PROVIDERS for t in PROVIDERS])
def test_convert_maps_canonical_options_and_keeps_provider_only_ones_to_their_provider(
    tmp_path: Path, source: str, target: str
) -> None:
    out, report, stderr = _convert(tmp_path, source, target)
    back = _imported(target, out)
    for option, value in CANONICAL.items():
        unsayable = (option == "stop" and NO_STOP & {source, target}) or (
            option == "tool_choice" and NO_TOOL_CHOICE & {source, target}
        )
        assert getattr(back, option) == (None if unsayable else value), option
    both_say_budget = {source, target} <= SAYS_THINKING_BUDGET
    assert back.thinking_budget == (THINKING if both_say_budget else None)
    effort = EFFORT.get(source)
    if target in NO_EFFORT or (target in EFFORT_OR_BUDGET and both_say_budget):
        effort = None
    assert back.reasoning_effort == effort
    assert back.output_schema is not None and back.output_schema.schema == SCHEMA

    own = PROVIDER_ONLY[source]
    if source == target:
        for path, value in own.items():
            assert _at(out, path) == value, f"{path} replays to {source} as sent"
        assert report["options_dropped"] == []
        assert not [d for d in report["dropped"] if d["block_type"] == "option"]
        return
    for path in own:
        assert _at(out, path) != own[path], f"{source}'s {path} must not reach {target}"
    assert sorted(report["options_dropped"]) == sorted(f"{source}:{path}" for path in own)
    logged = sorted(
        d["reason"].split(" ", 1)[0]
        for d in report["dropped"]
        if d["block_type"] == "option" and "own option" in d["reason"]
    )
    assert logged == sorted(own), "one §7.3 record per dropped option"
    assert "nothing dropped" not in stderr
    for path in own:
        assert f"not sent to {target}: {path} ({source}'s own option) goes to {source} only" in stderr


ALIASED = {
    "model": "gpt-4.1",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "max_tokens": 512,
}
"""An OpenAI Chat request naming its token limit by the deprecated alias `max_tokens`."""


@pytest.mark.parametrize("target", PROVIDERS)
def test_an_option_read_under_an_alias_is_its_value_and_the_spelling_no_loss(
    tmp_path: Path, target: str
) -> None:
    """The alias is the canonical `max_tokens`: every target gets the value in its own
    spelling (read back by its importer), so the spelling the import kept for replay
    (`metis.option_paths`) is reported nowhere, neither as a §7.3 record nor in the report;
    back to OpenAI the value goes under the name it came in. (A value a target has no
    field for is reported by the target's `options_to_wire`: test_options_effort.py.)"""
    src = tmp_path / "aliased.json"
    src.write_text(json.dumps(ALIASED))
    report = tmp_path / "report.json"
    args = ["convert", "--from", "openai", "--to", target, "--report", str(report), str(src)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out, said = json.loads(result.stdout), json.loads(report.read_text())
    assert _imported(target, out).max_tokens == 512
    assert said["options_dropped"] == []
    assert [d for d in said["dropped"] if d["block_type"] == "option"] == []
    if target == "openai":
        assert out["max_tokens"] == 512 and "max_completion_tokens" not in out


def test_foreign_provider_options_are_one_warn_each_with_the_lossy_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    options = _imported("gemini", REQUESTS["gemini"])
    options.model = "anthropic:claude-sonnet-4-6"
    imported = adapters.get("gemini").from_wire_request(
        REQUESTS["gemini"], session_id="s", tool_ids=options.tool_ids
    )
    caplog.set_level("WARNING", logger="metis.adapters")
    body = adapters.get("anthropic").to_wire(imported.messages, imported.tools, options)
    records = [r for r in caplog.records if getattr(r, "block_type", None) == "option"]
    assert sorted(r.reason for r in records) == [  # type: ignore[attr-defined]
        "generationConfig.topK (gemini's own option) goes to gemini only",
        "safetySettings (gemini's own option) goes to gemini only",
    ]
    for record in records:
        assert (record.session_id, record.message_id, record.adapter) == ("s", "request", "anthropic")  # type: ignore[attr-defined]
    assert "safetySettings" not in body and "generationConfig" not in body


def test_the_callers_extra_goes_to_whatever_target_it_calls() -> None:
    """`extra` is the caller's own knobs for the provider it calls; it merges over that
    provider's own options (deep: Ollama's `options` keep the sampling ones)."""
    imported = adapters.get("ollama").from_wire_request(
        REQUESTS["ollama"], session_id="s", tool_ids=ToolIdMap("s")
    )
    imported.options.extra = {"keep_alive": "1h", "options": {"seed": 3}}
    body = adapters.get("ollama").to_wire(imported.messages, imported.tools, imported.options)
    assert body["keep_alive"] == "1h"
    assert body["options"] == {
        "num_predict": 4096,
        "temperature": 0.5,
        "top_p": 0.9,
        "stop": ["END"],
        "num_ctx": 8192,
        "seed": 3,
    }


@pytest.mark.parametrize(
    ("provider", "where"),
    [
        ("anthropic", {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}}),
        (
            "openai",
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {
                        "name": "weather",
                        "description": "A forecast.",
                        "schema": SCHEMA,
                        "strict": True,
                    },
                }
            },
        ),
        (
            "responses",
            {
                "text": {
                    "format": {
                        "type": "json_schema",
                        "name": "weather",
                        "description": "A forecast.",
                        "schema": SCHEMA,
                        "strict": True,
                    }
                }
            },
        ),
        (
            "gemini",
            {"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA}},
        ),
        ("ollama", {"format": SCHEMA}),
    ],
)
def test_output_schema_is_written_in_each_providers_spelling(provider: str, where: dict[str, Any]) -> None:
    options = AdapterOptions(
        model=MODELS[provider],
        session_id="s",
        tool_ids=ToolIdMap("s"),
        output_schema=OutputSchema(SCHEMA, name="weather", strict=True, description="A forecast."),
    )
    body = adapters.get(provider).to_wire([], [], options)
    for key, value in where.items():
        assert body[key] == value


@pytest.mark.parametrize(
    ("provider", "json_mode"),
    [
        ("openai", {"response_format": {"type": "json_object"}}),
        ("gemini", {"generationConfig": {"responseMimeType": "application/json", "topK": 40}}),
        ("ollama", {"format": "json"}),
    ],
)
def test_json_mode_without_a_schema_stays_provider_only(provider: str, json_mode: dict[str, Any]) -> None:
    """JSON mode promises JSON but names no schema: no canonical output_schema, replayed as sent."""
    request = {**REQUESTS[provider], **json_mode}
    imported = adapters.get(provider).from_wire_request(request, session_id="s", tool_ids=ToolIdMap("s"))
    assert imported.options.output_schema is None
    assert imported.options.provider_options[provider] == {
        **PROVIDER_ONLY_FIELDS[provider],
        **json_mode,
    }
    again = adapters.get(provider).to_wire(imported.messages, imported.tools, imported.options)
    for path in _leaf_paths(json_mode):
        assert _at(again, path) == _at(json_mode, path)


def _leaf_paths(fields: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, value in fields.items():
        if isinstance(value, dict) and value:
            out.extend(_leaf_paths(value, f"{prefix}{key}."))
        else:
            out.append(f"{prefix}{key}")
    return out


# --- round trip to the same provider --------------------------------------------------------------


_CONTENT = {
    "messages",
    "tools",
    "system",
    "contents",
    "systemInstruction",
    "system_instruction",
    "input",
    "instructions",
    "model",
}


RECORDED = [(provider, name) for provider in PROVIDERS for name in golden.inputs(provider, "request")]


@pytest.mark.parametrize(("provider", "name"), RECORDED)
def test_a_recorded_request_keeps_every_option_to_its_own_provider(provider: str, name: str) -> None:
    body = json.loads(golden.read_input(provider, name))
    adapter = adapters.get(provider)
    imported = adapter.from_wire_request(body, session_id="s", tool_ids=ToolIdMap("s"))
    again = adapter.to_wire(imported.messages, imported.tools, imported.options)
    ignored = {d["path"] for d in imported.dropped} | _CONTENT  # what the import listed as no option
    sent = option_fields(body, ignored)
    written = option_fields(again, ignored)
    for fields, source in ((sent, body), (written, again)):
        if "stream" in source:  # the client's choice, kept by the import, spelled as it was
            fields["stream"] = source["stream"]
    plain = AdapterOptions(model=imported.options.model, session_id="s", tool_ids=ToolIdMap("s"))
    for key in option_fields(adapter.to_wire([], [], plain), ignored):
        if key not in sent:  # what the writer sets in every request (Responses' `store: false`)
            written.pop(key, None)
    assert written == sent


# --- the client --------------------------------------------------------------------------------


def test_a_client_request_carries_canonical_and_its_own_providers_options(tmp_path: Path) -> None:
    """`send(**options)` takes the same AdapterOptions fields: the schema in OpenAI's
    spelling, OpenAI's own `seed`, and nothing of the Gemini options beside it."""
    case = next(c for c in CLIENT_PROVIDERS if c.provider == "openai")
    provider = ScriptedProvider().add(json_reply(ok_body(case)))
    fake = FakeTime()
    with (
        Store.open(tmp_path / "metis.sqlite3") as store,
        Client(
            store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
        ) as client,
    ):
        client.session(case.model, workspace=tmp_path).send(
            "Weather in Paris?",
            output_schema=OutputSchema(SCHEMA, name="weather", strict=True),
            provider_options={"openai": {"seed": 7}, "gemini": {"safetySettings": []}},
        )
    body = provider.body()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": SCHEMA, "strict": True},
    }
    assert body["seed"] == 7 and "safetySettings" not in body
    case.fixtures().check_request(body)


ANY_TOOL = {
    "anthropic": ("tool_choice", {"type": "any"}),
    "openai": ("tool_choice", "required"),
    "openrouter": ("tool_choice", "required"),
    "mistral": ("tool_choice", "any"),
    "responses": ("tool_choice", "required"),
    "gemini": ("toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
}
"""`The model must call some tool`, as each provider with a tool-choice field spells it."""


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in ANY_TOOL for t in ANY_TOOL])
def test_tool_choice_is_mapped_by_meaning_not_by_name(tmp_path: Path, source: str, target: str) -> None:
    """Issue 15 item 14: Anthropic's {"type": "any"} is OpenAI's "required", never a tool named "any"."""
    key, value = ANY_TOOL[source]
    request = {k: v for k, v in REQUESTS[source].items() if k not in ("tool_choice", "toolConfig")}
    request[key] = value
    src = tmp_path / "in.json"
    src.write_text(json.dumps(request))
    result = CliRunner().invoke(cli, ["convert", "--from", source, "--to", target, str(src)])
    assert result.exit_code == 0, result.output
    out_key, out_value = ANY_TOOL[target]
    assert json.loads(result.stdout)[out_key] == out_value
