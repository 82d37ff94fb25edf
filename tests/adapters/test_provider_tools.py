"""Provider-run tools as canonical tool definitions (schema v3 `kind`), and `strict` literals.

Golden inputs `tests/golden/<provider>/tools_*.json` are built from the providers' own
documentation examples and SDK types (sources in each folder's `_sources.md`). Each one:
import -> canonical (a golden of the definitions) -> to_wire back to the same provider gives
the recorded tools exactly, checked with the official SDK types where the provider has one.
Projections between providers are checked with the SDK types of the target; what a target
cannot carry is dropped with one WARN carrying the five §7.3 fields, or refused when the
definition is critical.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming as BetaParams
from metis import adapters
from metis.adapters._kit.base import AdapterOptions, WireImport
from metis.client import Client
from metis.errors import CriticalBlockError
from metis.ids import ToolIdMap
from metis.store import Store
from metis.tools import ToolRegistry
from metis_schema.v3 import SideEffects, ToolDefinition, ToolKind
from pydantic import TypeAdapter

from tests.support import golden
from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body
from tests.support.contracts import anthropic as anthropic_contract
from tests.support.contracts import gemini as gemini_contract
from tests.support.contracts import mistral as mistral_contract
from tests.support.contracts import openai as openai_contract
from tests.support.contracts import responses as responses_contract

SESSION = "sess_provider_tools"
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")

GOLDENS = [
    ("anthropic", "tools_server.json"),
    ("anthropic", "tools_mcp.json"),
    ("responses", "tools_builtin.json"),
    ("responses", "tools_preview.json"),
    ("gemini", "tools_builtin.json"),
    ("gemini", "tools_camel.json"),
    ("openai", "tools_search_options.json"),
    ("openrouter", "tools_server.json"),
]

TOOL_FIELDS = {"tools", "web_search_options", "plugins", "mcp_servers"}
"""The request fields that declare tools (an MCP server list is Anthropic's half of one)."""


def _recorded(provider: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(golden.read_input(provider, name))
    return body


def _import(provider: str, body: dict[str, Any]) -> WireImport:
    return adapters.get(provider).from_wire_request(
        copy.deepcopy(body), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )


def _write(provider: str, model: str, imported: WireImport, **options: Any) -> dict[str, Any]:
    own = imported.options.provider_options
    opts = AdapterOptions(
        model=model,
        session_id=SESSION,
        tool_ids=ToolIdMap(SESSION),
        max_tokens=256,
        provider_options={k: v for k, v in own.items() if k == provider},
        **options,
    )
    return adapters.get(provider).to_wire(imported.messages, imported.tools, opts)


_BETA: TypeAdapter[Any] = TypeAdapter(BetaParams)
"""Module-level: a validated value's lazy iterators need their adapter alive to drain."""


def _check_anthropic(body: dict[str, Any]) -> None:
    """The SDK's request type, beta when the body uses a beta tool (MCP toolset, computer)."""
    if "mcp_servers" in body or any(
        str(t.get("type")).startswith("computer_") for t in body.get("tools", [])
    ):
        anthropic_contract.drain(_BETA.validate_python(body))
    else:
        anthropic_contract.check_request(body)


CHECKS = {
    "anthropic": _check_anthropic,
    "responses": lambda body: responses_contract.check_request(body, open_responses=False),
    "gemini": gemini_contract.check_request,
    "openai": openai_contract.check_request,
    "mistral": mistral_contract.check_request,
}
"""The official SDK check per target (OpenRouter's server tools and plugins have no SDK
type: their shapes are the documented ones, asserted literally below)."""


def _drops(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        {f: getattr(r, f, "<missing>") for f in FIVE}
        for r in caplog.records
        if r.levelno == logging.WARNING and str(getattr(r, "block_type", "")).endswith("_tool")
    ]


# --- same provider: import, golden, replay -------------------------------------------


@pytest.mark.parametrize(("provider", "name"), GOLDENS)
def test_documented_provider_tools_import_to_golden_and_replay_exactly(provider: str, name: str) -> None:
    original = _recorded(provider, name)
    imported = _import(provider, original)
    assert imported.dropped == []
    declared = [t for t in imported.tools if "tool" in (t.provider_data or {}).get(provider, {})]
    assert declared and all(t.kind not in (None, ToolKind.function) for t in declared)
    document = [t.model_dump(mode="json", exclude_none=True) for t in imported.tools]
    golden.check(provider, name.replace(".json", ".canonical.golden.json"), document)
    model = imported.options.model
    body = _write(provider, model, imported)
    for key in TOOL_FIELDS:
        assert body.get(key) == original.get(key), key
    if provider in CHECKS:
        CHECKS[provider](body)


def test_imported_provider_tools_have_kinds_by_meaning() -> None:
    kinds = {
        (provider, name): [t.kind for t in _import(provider, _recorded(provider, name)).tools]
        for provider, name in GOLDENS
    }
    k = ToolKind
    assert kinds[("anthropic", "tools_server.json")] == [
        k.web_search,
        k.web_fetch,
        k.code_execution,
        k.tool_search,
        None,  # the deferred function tool
        k.provider_only,
        k.provider_only,
        k.provider_only,
    ]
    assert kinds[("anthropic", "tools_mcp.json")] == [k.remote_mcp, k.computer_use]
    assert kinds[("responses", "tools_builtin.json")] == [
        k.web_search,
        k.file_search,
        k.code_execution,
        k.remote_mcp,
        k.image_generation,
        k.tool_search,
        None,
        k.computer_use,
        k.provider_only,
        k.provider_only,
    ]
    assert kinds[("gemini", "tools_builtin.json")] == [
        k.web_search,
        k.web_fetch,
        k.code_execution,
        k.file_search,
        k.provider_only,
        k.computer_use,
    ]
    assert kinds[("openai", "tools_search_options.json")] == [k.web_search]
    assert kinds[("openrouter", "tools_server.json")] == [
        k.web_search,
        k.web_fetch,
        k.provider_only,
        k.web_search,
    ]


def test_anthropic_mcp_toolset_reads_its_server_url_and_defer_loading_is_canonical() -> None:
    mcp = _import("anthropic", _recorded("anthropic", "tools_mcp.json")).tools[0]
    assert mcp.config is not None
    assert (mcp.config.server_label, mcp.config.server_url) == (
        "example-mcp",
        "https://example-server.modelcontextprotocol.io/sse",
    )
    deferred = _import("anthropic", _recorded("anthropic", "tools_server.json")).tools[4]
    assert deferred.name == "get_weather" and deferred.defer_loading is True


# --- projections by meaning ----------------------------------------------------------


def test_web_search_projects_by_meaning_anthropic_to_responses_to_gemini_to_openrouter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    anthropic = _recorded("anthropic", "tools_server.json")
    anthropic["tools"] = anthropic["tools"][:1]
    imported = _import("anthropic", anthropic)

    responses = _write("responses", "responses:gpt-5", imported)
    CHECKS["responses"](responses)
    assert responses["tools"] == [
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["example.com", "trusteddomain.org"]},
            "user_location": {
                "type": "approximate",
                "city": "San Francisco",
                "region": "California",
                "country": "US",
                "timezone": "America/Los_Angeles",
            },
        }
    ]
    assert [d["reason"] for d in _drops(caplog)] == [
        "web_search config max_uses has no responses field; not sent"
    ]

    caplog.clear()
    gemini = _write("gemini", "gemini:gemini-2.5-flash", _import("responses", responses))
    CHECKS["gemini"](gemini)
    assert gemini["tools"] == [{"googleSearch": {}}]
    (drop,) = _drops(caplog)
    assert drop["adapter"] == "gemini" and "allowed_domains, user_location" in drop["reason"]

    caplog.clear()
    openrouter = _write("openrouter", "openrouter:openai/gpt-4o", _import("gemini", gemini))
    assert openrouter["tools"] == [{"type": "openrouter:web_search"}]  # the documented server tool
    assert "plugins" not in openrouter and _drops(caplog) == []

    # and back: OpenRouter's documented parameters map to Anthropic's fields by meaning
    back = _write(
        "anthropic",
        "anthropic:claude-sonnet-4-5",
        _import("openrouter", _recorded("openrouter", "tools_server.json")),
    )
    CHECKS["anthropic"](back)
    assert back["tools"][0] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "allowed_domains": ["nytimes.com"],
    }
    assert back["tools"][1] == {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 2}
    assert back["tools"][2] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "blocked_domains": ["example.com"],
    }


@pytest.mark.parametrize(
    ("source", "name", "index"),
    [
        ("anthropic", "tools_server.json", 2),
        ("responses", "tools_builtin.json", 2),
        ("gemini", "tools_builtin.json", 2),
    ],
)
def test_code_execution_projects_between_anthropic_responses_and_gemini(
    source: str, name: str, index: int
) -> None:
    body = _recorded(source, name)
    body["tools"] = [body["tools"][index]]
    imported = _import(source, body)
    assert [t.kind for t in imported.tools] == [ToolKind.code_execution]
    expected = {
        "anthropic": {"type": "code_execution_20250825", "name": "code_execution"},
        "responses": {"type": "code_interpreter", "container": {"type": "auto"}},
        "gemini": {"codeExecution": {}},
    }
    models = {
        "anthropic": "anthropic:claude-sonnet-4-5",
        "responses": "responses:gpt-5",
        "gemini": "gemini:gemini-2.5-flash",
    }
    for target in ("anthropic", "responses", "gemini"):
        out = _write(target, models[target], imported)
        CHECKS[target](out)
        if target == source:
            assert out["tools"] == body["tools"]
        else:
            assert out["tools"] == [expected[target]], target


def test_chat_web_search_options_go_to_search_models_only(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    anthropic = _recorded("anthropic", "tools_server.json")
    anthropic["tools"] = anthropic["tools"][:1]
    imported = _import("anthropic", anthropic)
    search = _write("openai", "openai:gpt-4o-search-preview", imported)
    CHECKS["openai"](search)
    assert "tools" not in search
    assert search["web_search_options"] == {
        "user_location": {
            "type": "approximate",
            "approximate": {
                "city": "San Francisco",
                "region": "California",
                "country": "US",
                "timezone": "America/Los_Angeles",
            },
        }
    }
    caplog.clear()
    plain = _write("openai", "openai:gpt-4.1", imported)
    CHECKS["openai"](plain)
    assert "web_search_options" not in plain and "tools" not in plain
    (drop,) = _drops(caplog)
    assert drop["block_type"] == "web_search_tool" and "search models" in drop["reason"]


# --- drops: one WARN with the five fields, or a refusal -------------------------------


@pytest.mark.parametrize(
    ("target", "model", "kinds"),
    [
        (
            "anthropic",
            "anthropic:claude-sonnet-4-5",
            [
                "file_search",
                "remote_mcp",
                "image_generation",
                "computer_use",
                "provider_only",
                "provider_only",
            ],
        ),
        (
            "gemini",
            "gemini:gemini-2.5-flash",
            [
                "file_search",
                "image_generation",
                "tool_search",
                "computer_use",
                "provider_only",
                "provider_only",
            ],
        ),
        (
            "mistral",
            "mistral:mistral-large-latest",
            [
                "web_search",
                "file_search",
                "code_execution",
                "remote_mcp",
                "image_generation",
                "tool_search",
                "computer_use",
                "provider_only",
                "provider_only",
            ],
        ),
        (
            "ollama",
            "ollama:qwen3",
            [
                "web_search",
                "file_search",
                "code_execution",
                "remote_mcp",
                "image_generation",
                "tool_search",
                "computer_use",
                "provider_only",
                "provider_only",
            ],
        ),
    ],
)
def test_tools_a_target_lacks_are_dropped_with_one_five_field_warn_each(
    target: str, model: str, kinds: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    imported = _import("responses", _recorded("responses", "tools_builtin.json"))
    body = _write(target, model, imported)
    if target in CHECKS:
        CHECKS[target](body)
    drops = [d for d in _drops(caplog) if "config" not in d["reason"]]
    assert [d["block_type"] for d in drops] == [f"{k}_tool" for k in kinds]
    for drop in drops:
        assert drop["session_id"] == SESSION and drop["adapter"] == target and drop["reason"]
        assert drop["message_id"] == "request"  # a tool belongs to the request, not to a message


def test_a_critical_tool_the_target_lacks_is_refused() -> None:
    imported = _import("responses", _recorded("responses", "tools_builtin.json"))
    imported.tools[1] = imported.tools[1].model_copy(update={"critical": True})  # file_search
    with pytest.raises(CriticalBlockError, match="critical file_search tool"):
        _write("anthropic", "anthropic:claude-sonnet-4-5", imported)


def test_provider_tools_register_and_a_callers_own_is_written_by_meaning() -> None:
    """The registry (the client's `tools=`) takes them; a definition a caller writes by
    hand, with no provider's declaration, is written from its kind and config."""
    plain = {"name": "n", "description": "", "input_schema": {"type": "object"}, "side_effects": "none"}
    registry = ToolRegistry([*_import("gemini", _recorded("gemini", "tools_builtin.json")).tools, plain])
    assert next(t.kind for t in registry) == ToolKind.web_search
    assert registry.get("web_search").side_effects == SideEffects.network
    made = ToolDefinition.model_validate(
        {
            "name": "web_search",
            "description": "",
            "input_schema": {"type": "object"},
            "side_effects": "network",
            "kind": "web_search",
            "config": {"max_uses": 2},
        }
    )
    turns = _import("anthropic", _recorded("anthropic", "tools_mcp.json"))
    own = WireImport(messages=turns.messages, tools=[made], options=turns.options)
    body = _write("anthropic", "anthropic:claude-sonnet-4-5", own)
    assert body["tools"] == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 2}]
    CHECKS["anthropic"]({k: v for k, v in body.items() if k != "mcp_servers"})


# --- strict: absent, null, false, true ------------------------------------------------

_PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
_LITERALS: list[tuple[str, dict[str, Any]]] = [
    ("absent", {}),
    ("null", {"strict": None}),
    ("false", {"strict": False}),
    ("true", {"strict": True}),
]


def _chat_body(provider: str) -> dict[str, Any]:
    model = {"openai": "gpt-4.1", "openrouter": "openai/gpt-4o", "mistral": "mistral-large-latest"}[provider]
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [
            {
                "type": "function",
                "function": {"name": f"w_{n}", "description": "Weather.", "parameters": _PARAMS, **s},
            }
            for n, s in _LITERALS
        ],
    }


@pytest.mark.parametrize("provider", ["openai", "openrouter", "mistral"])
def test_chat_strict_absent_null_false_true_round_trip(provider: str) -> None:
    original = _chat_body(provider)
    imported = _import(provider, original)
    assert imported.dropped == []
    assert [t.strict for t in imported.tools] == [False, False, False, True]
    body = _write(provider, imported.options.model, imported)
    assert body["tools"] == original["tools"]
    if provider in CHECKS:
        CHECKS[provider](body)


def test_responses_strict_absent_null_false_true_round_trip() -> None:
    original = {
        "model": "gpt-5",
        "input": "Weather in Paris?",
        "tools": [
            {"type": "function", "name": f"w_{n}", "description": "Weather.", "parameters": _PARAMS, **s}
            for n, s in _LITERALS
        ],
    }
    imported = _import("responses", original)
    assert [t.strict for t in imported.tools] == [False, False, False, True]
    body = _write("responses", "responses:gpt-5", imported)
    assert body["tools"] == original["tools"]
    # the SDK's own type needs `strict` (null allowed): the recorded absent one is as sent
    present = {**body, "tools": body["tools"][1:]}
    CHECKS["responses"](present)


def test_strict_meaning_crosses_dialects_and_literals_stay_home() -> None:
    imported = _import(
        "responses",
        {
            "model": "gpt-5",
            "input": "hi",
            "tools": [
                {"type": "function", "name": f"w_{n}", "description": "Weather.", "parameters": _PARAMS, **s}
                for n, s in _LITERALS
            ],
        },
    )
    chat = _write("openai", "openai:gpt-4.1", imported)
    assert [t["function"].get("strict", "-") for t in chat["tools"]] == ["-", "-", "-", True]
    imported = _import("openai", _chat_body("openai"))
    responses = _write("responses", "responses:gpt-5", imported)
    assert [t["strict"] for t in responses["tools"]] == [False, False, False, True]
    CHECKS["responses"](responses)
    # the kept literal says what was sent, so a tool made strict later is written strict
    loosened = imported.tools[2].model_copy(update={"strict": True})
    again = _write(
        "openai",
        "openai:gpt-4.1",
        WireImport(messages=imported.messages, tools=[loosened], options=imported.options),
    )
    assert again["tools"][0]["function"]["strict"] is True


def test_replayed_beta_tools_name_their_beta_headers() -> None:
    imported = _import("anthropic", _recorded("anthropic", "tools_mcp.json"))
    adapter = adapters.get("anthropic")
    body = _write("anthropic", imported.options.model, imported)
    assert adapter.request_headers(body) == {
        "anthropic-beta": "computer-use-2025-01-24,mcp-client-2025-11-20"
    }
    body.pop("mcp_servers")
    assert adapter.request_headers(body) == {
        "anthropic-beta": "computer-use-2025-01-24,mcp-client-2025-11-20"
    }


@pytest.mark.parametrize("target", ["openai", "gemini", "ollama"])
def test_deferred_tools_sent_to_a_provider_without_tool_search_say_so_once(
    target: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    body = _recorded("anthropic", "tools_server.json")
    body["tools"] = [body["tools"][4]]  # the deferred function tool
    models = {"openai": "openai:gpt-4.1", "gemini": "gemini:gemini-2.5-flash", "ollama": "ollama:qwen3"}
    _write(target, models[target], _import("anthropic", body))
    warns = [r for r in caplog.records if getattr(r, "block_type", None) == "defer_loading"]
    assert len(warns) == 1 and "get_weather" in warns[0].reason  # type: ignore[attr-defined]
    assert all(hasattr(warns[0], f) for f in FIVE)


def test_the_client_sends_provider_tools_given_as_tools(tmp_path: Path) -> None:
    """`client.session(..., tools=[...])` takes provider tools beside function tools and the
    request carries them in the provider's spelling."""
    case = next(c for c in PROVIDERS if c.provider == "anthropic")
    tools = _import("anthropic", _recorded("anthropic", "tools_server.json")).tools
    provider = ScriptedProvider().add(json_reply(ok_body(case)))
    fake = FakeTime()
    with Store.open(tmp_path / "metis.sqlite3") as store:
        client = Client(
            store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
        )
        with client:
            session = client.session(case.model, workspace=tmp_path, tools=tools)
            session.send("What's new in Python 3.14?")
    sent = provider.body()
    assert sent["tools"] == _recorded("anthropic", "tools_server.json")["tools"]
    CHECKS["anthropic"](sent)
