"""`metis validate --provider P`: the provider's own request contract (required fields, known
top-level fields, value types), checked apart from "metis can import it"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from metis import adapters
from metis.adapters._kit.contract import CONTRACTS, check_request
from metis.cli import cli

from tests.support import golden

VALID = {
    "responses": ["request_every_shape.json", "request_text.json", "conversation.request.golden.json"],
    "mistral": ["request_tools.json", "conversation.request.golden.json"],
    "anthropic": ["request_recorded.json", "conversation.request.golden.json"],
    "openai": [
        "request_every_shape.json",
        "request_followup.json",
        "request_tools.json",
        "developer_extra.request.golden.json",
        "every_block_type.request.golden.json",
    ],
    "openrouter": [
        "request_anthropic.json",
        "request_openai.json",
        "request_followup.json",
        "reasoning_cache_routing.request.golden.json",
    ],
    "gemini": [
        "request_recorded.json",
        "conversation.request.golden.json",
        "tool_results.request.golden.json",
    ],
    "ollama": ["request_qwen3.json", "request_gemma3_images.json", "conversation_qwen3.request.golden.json"],
}
"""Recorded and written bodies of each provider: the provider's contract holds for them."""


def body(provider: str, name: str | None = None) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(golden.read_input(provider, name or VALID[provider][0]))
    return loaded


def validate(tmp_path: Path, provider: str, doc: dict[str, Any]) -> Result:
    path = tmp_path / f"{provider}.json"
    path.write_text(json.dumps(doc))
    return CliRunner().invoke(cli, ["validate", "--provider", provider, str(path)], catch_exceptions=False)


def test_every_adapter_has_a_contract() -> None:
    assert set(CONTRACTS) == set(adapters.names())


@pytest.mark.parametrize(("provider", "name"), [(p, n) for p, names in VALID.items() for n in names])
def test_valid_bodies_pass_both_checks(tmp_path: Path, provider: str, name: str) -> None:
    result = validate(tmp_path, provider, body(provider, name))
    assert result.exit_code == 0, result.output
    assert f"{provider} request contract: ok" in result.stdout
    assert "metis import: ok" in result.stdout
    assert f"valid {provider} request body" in result.stdout


def drop(doc: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != key}


BROKEN: list[tuple[str, str, dict[str, Any], str]] = [
    # missing or null where the provider requires a value (metis imports these)
    ("anthropic", "missing max_tokens", drop(body("anthropic"), "max_tokens"), "max_tokens: required by anthropic"),
    ("anthropic", "null max_tokens", {**body("anthropic"), "max_tokens": None}, "max_tokens: Input should be a valid integer"),
    # a top-level field the provider does not know
    ("anthropic", "unknown field", {**body("anthropic"), "temprature": 0.2}, "temprature: unknown field, not accepted by anthropic"),
    ("openai", "unknown field", {**body("openai"), "max_output": 5}, "max_output: unknown field, not accepted by openai"),
    ("openrouter", "unknown field", {**body("openrouter"), "routing": {}}, "routing: unknown field, not accepted by openrouter"),
    ("gemini", "unknown field", {**body("gemini"), "maxTokens": 5}, "maxTokens: unknown field, not accepted by gemini"),
    ("ollama", "unknown field", {**body("ollama"), "num_ctx": 4096}, "num_ctx: unknown field, ignored by ollama"),
    # a known field of the wrong type (one metis does not map, so the import passes it)
    ("anthropic", "wrong type", {**body("anthropic"), "top_k": "ten"}, "top_k: Input should be a valid integer"),
    ("openai", "wrong type", {**body("openai"), "seed": "42"}, "seed: Input should be a valid integer"),
    ("openrouter", "wrong type", {**body("openrouter"), "models": "a,b"}, "models: Input should be a valid list"),
    ("gemini", "wrong type", {**body("gemini"), "safetySettings": "off"}, "safetySettings: Input should be a valid list"),
    ("ollama", "wrong type", {**body("ollama"), "think": 3}, "think: Input should be a valid boolean or Input should be a valid string"),
    # another provider's fields (what a conversion that leaks options produces)
    ("openai", "openrouter's reasoning", {**body("openai"), "reasoning": {"max_tokens": 100}}, "reasoning: unknown field, not accepted by openai (a field of the openrouter, responses request)"),
    ("openai", "anthropic's system", {**body("openai"), "system": "Be brief."}, "system: unknown field, not accepted by openai (a field of the anthropic request)"),
    ("anthropic", "openai's n", {**body("anthropic"), "n": 2}, "n: unknown field, not accepted by anthropic (a field of the openai, openrouter, mistral request)"),
    ("gemini", "openai's messages", {**body("gemini"), "messages": []}, "messages: unknown field, not accepted by gemini"),
    ("ollama", "anthropic's max_tokens", {**body("ollama"), "max_tokens": 64}, "max_tokens: unknown field, ignored by ollama"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("provider", "case", "doc", "needle"), BROKEN, ids=[f"{p}-{c}" for p, c, _, _ in BROKEN]
)
def test_bodies_the_provider_would_refuse_fail_the_contract_but_import(
    tmp_path: Path, provider: str, case: str, doc: dict[str, Any], needle: str
) -> None:
    result = validate(tmp_path, provider, doc)
    assert result.exit_code == 1, result.output
    assert f"{provider} request contract: 1 problem(s)" in result.stdout, result.stdout
    assert needle in result.stdout, result.stdout
    assert "metis import: ok" in result.stdout, "metis can still import it: a separate check"
    assert f"invalid {provider} request body: 1 problem(s)" in result.stdout


def test_an_import_failure_is_named_as_such(tmp_path: Path) -> None:
    doc = body("anthropic")
    doc["messages"] = [{"role": "user", "content": [{"type": "image", "source": {}}]}]
    result = validate(tmp_path, "anthropic", doc)
    assert result.exit_code == 1
    assert "metis import: 1 problem(s)" in result.stdout
    assert "messages[0].content" in result.stdout


def test_problems_carry_their_path_and_rule() -> None:
    doc = drop({**body("anthropic"), "n": 2, "temperature": "hot"}, "max_tokens")
    found = {(p.path, p.rule) for p in check_request("anthropic", doc)}
    assert found == {("max_tokens", "required"), ("n", "known-fields"), ("temperature", "type")}
    gemini = drop(body("gemini"), "safetySettings")
    assert check_request("gemini", {**gemini, "safety_settings": []}) == [], "either spelling"
    assert check_request("gemini", {**gemini, "safetySettings": []}) == []


CONVERT_FROM = {
    "anthropic": "conversation.request.golden.json",
    "openai": "request_every_shape.json",
    "openrouter": "request_anthropic.json",
    "gemini": "request_recorded.json",
    "ollama": "request_qwen3.json",
}


@pytest.mark.parametrize(("source", "target"), [(s, t) for s in CONVERT_FROM for t in CONTRACTS if s != t])
def test_a_converted_body_keeps_to_the_target_contract(tmp_path: Path, source: str, target: str) -> None:
    runner = CliRunner()
    src = golden.folder(source) / CONVERT_FROM[source]
    report = tmp_path / "report.json"
    converted = runner.invoke(
        cli,
        ["convert", "--from", source, "--to", target, "--report", str(report), str(src)],
        catch_exceptions=False,
    )
    assert converted.exit_code == 0, converted.output
    out = json.loads(converted.stdout)
    assert check_request(target, out) == [], "no other provider's fields in the body"
    dropped = json.loads(report.read_text())["options_dropped"]
    for entry in dropped:
        owner, path = entry.split(":", 1)
        assert owner == source and _at(out, path) is None, f"{entry} is reported dropped, not sent"


def _at(body: dict[str, Any], path: str) -> Any:
    value: Any = body
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def test_convert_names_the_options_it_does_not_carry(tmp_path: Path) -> None:
    src = golden.folder("openai") / "request_every_shape.json"
    result = CliRunner().invoke(cli, ["convert", "--from", "openai", "--to", "anthropic", str(src)])
    assert result.exit_code == 0, result.output
    assert "nothing dropped" not in result.stderr
    for name in ("seed", "response_format.type"):
        assert f"not sent to anthropic: {name} (openai's own option) goes to openai only" in result.stderr
        assert name.split(".")[0] not in json.loads(result.stdout)
    # the reasoning effort is canonical (issue 30): carried as Anthropic's effort
    assert json.loads(result.stdout)["output_config"] == {"effort": "low"}
    same = CliRunner().invoke(cli, ["convert", "--from", "openai", "--to", "openai", str(src)])
    assert json.loads(same.stdout)["seed"] == body("openai")["seed"], "to the same provider: replayed as sent"
