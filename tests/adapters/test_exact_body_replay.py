"""Every recorded request replays to its own provider as it was sent: the whole body (issue 30, done-when).

Each recorded request, of every provider, is imported (`from_wire_request`) and written back
to the same provider with the options the import read (`to_wire(imp.messages, imp.tools,
imp.options)`), and the whole body is compared with the recorded one: tools, `strict`,
options, items, citations, ids, and how the body was spelled. The requests are every
golden request (`tests/golden/<provider>/request_*.json` and `tools_*.json`) and every
request of the recordings under tests/fixtures/recordings/ (VCR cassettes, HAR files,
exchange documents; routed to their adapter by URL as `metis import` does).

Measured per provider (exact whole-body replay, k of n; golden requests + recorded ones):

| provider   | golden | recordings | exact | before (5f19a89) |
|------------|--------|------------|-------|------------------|
| anthropic  | 4      | 11         | 15/15 | 0/15             |
| openai     | 4      | 6          | 10/10 | 7/10             |
| openrouter | 4      | 6          | 10/10 | 10/10            |
| gemini     | 5      | 6          | 11/11 | 6/11             |
| ollama     | 3      | 6          | 8/9 + 1 allowed | 6/9    |
| mistral    | 2      | 6          | 8/8   | 7/8              |
| responses  | 8      | 6          | 14/14 | 0/14             |
| all        | 30     | 47         | 76/77 + 1 allowed | 36/77 |

What each difference was, and where a replay now keeps it:

- Anthropic: string `content` (a turn's, a tool_result's) came back as a text block list, and a
  `system` turn among the messages was hoisted into the top-level `system` (one message
  fewer): kept by message id in the `spelled` directive (`string_content`, `system_turn`).
- OpenAI Chat: `stream: false` dropped, `stream_options.include_usage` added to a stream that
  did not ask for usage: `metis` directives `stream_sent`, `stream_usage`.
- Mistral: the tool message's `name` was dropped: it is the called function's, so the writer
  names it again (`tool_names` directive); a name that is not the call's stays a listed drop.
- Gemini: snake_case fields and parts written camelCase, a content without `role` given one,
  the system instruction's `role` dropped: the `spelling` directive (`gemini.to_wire.respell`).
- Ollama: a top-level field the server ignores (a lax client's `temperature`) was dropped, a
  data-URL image written as raw base64 (and not at all to a text-only model), `tool_name`
  added to results sent without one, `stream: true` added: kept as Ollama's own option, in
  the `spelled` directive (`data_url_images`, `images_sent_to`, `unnamed_result`) and
  `stream_sent`.
- Responses: `store: false` and `include` added (the `stateless` directive: a fresh send still
  gets them, for reasoning to survive without stored items), a string `input`, message items
  without `type` or with string content respelled, an `item_reference` dropped, the `id`,
  `status` and part form of imported assistant-side items dropped: the `spelled` directive
  (`input_string`, `typeless`, `string_content`), the `items_before` directive, and the
  assistant message's provider_raw (`item_fields`, kept by imports only).

Directives are `metis` keys of the provider's `provider_options` entry (`options.DIRECTIVES`);
`spelled` names messages by id (`options.SPELLED`), so it follows them through appended
turns and never rides on a stored message. Those that only record a spelling
(`options.SPELLING_ONLY`) are not reported when the entry goes to another provider.

What a replay to the same provider still changes (`ALLOWED`, each with its reason): Ollama
tool-call `arguments` sent as a JSON string by a lax client go back as the object Ollama's
API declares. What each direction still drops, to other providers, is the §7.3 WARN of each
kept field (`test_loss_report_fields.py`); an import's own drops are listed in
`WireImport.dropped` with the same WARN (`item_reference` items among them, kept for replay
to the endpoint that stores them).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections import Counter
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.adapters._kit.base import WireImport
from metis.endpoints import route
from metis.ids import ToolIdMap
from metis.recordings import read_recording

from tests.support import golden
from tests.support.paths import FIXTURES

SESSION = "sess_exact_body"
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")
RECORDINGS = FIXTURES / "recordings"

ALLOWED: dict[tuple[str, str], dict[str, str]] = {
    ("ollama", "request_quirks.json"): {
        "messages[1].tool_calls[0].function.arguments": "a lax client sent the arguments as a JSON"
        " string; Ollama's /api/chat refuses one (`json: cannot unmarshal string into Go struct field"
        " ChatRequest.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments`,"
        " spec/provider-wire-formats.md), so the replay sends the object they mean (provider_raw"
        " string_arguments names the call)",
    },
}
"""(provider, case) -> {body path: why a replay to the same provider writes it otherwise}."""

EXACT = {
    "anthropic": (15, 15),
    "openai": (10, 10),
    "openrouter": (10, 10),
    "gemini": (11, 11),
    "ollama": (8, 9),
    "mistral": (8, 8),
    "responses": (14, 14),
}
"""Per provider: (requests replayed byte-for-byte as JSON, requests): the module docstring's table."""


@dataclasses.dataclass(frozen=True)
class Case:
    provider: str
    name: str
    body: dict[str, Any]
    model: str | None = None
    """The model a URL names (Gemini), as `metis import` reads it."""

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


def _golden_cases() -> list[Case]:
    return [
        Case(provider, name, orjson.loads(golden.read_input(provider, name)))
        for provider in adapters.names()
        for name in [*golden.inputs(provider, "request"), *golden.inputs(provider, "tools")]
    ]


def _recorded_cases() -> list[Case]:
    cases = []
    for path in sorted(RECORDINGS.rglob("*")):
        if path.suffix not in (".har", ".yaml", ".json"):
            continue
        for n, exchange in enumerate(read_recording(path.read_text(encoding="utf-8"), where=str(path))):
            routed = route(exchange.url) if exchange.url else None
            if routed is None or not isinstance(exchange.request, dict):
                continue  # no LLM call (the recordings hold one each), or no request kept
            name = f"{path.relative_to(RECORDINGS)}#{n}"
            cases.append(Case(routed.adapter, name, exchange.request, routed.model))
    return cases


CASES = _golden_cases() + _recorded_cases()


def _import(case: Case) -> WireImport:
    kwargs = {"model": case.model} if case.model is not None and case.provider == "gemini" else {}
    return adapters.get(case.provider).from_wire_request(  # type: ignore[call-arg]
        copy.deepcopy(case.body), session_id=SESSION, tool_ids=ToolIdMap(SESSION), **kwargs
    )


def _replay(case: Case) -> dict[str, Any]:
    imported = _import(case)
    return adapters.get(case.provider).to_wire(imported.messages, imported.tools, imported.options)


def differences(sent: Any, replayed: Any, path: str = "") -> dict[str, str]:
    """Body path -> what differs, between the recorded body and its replay."""
    if isinstance(sent, dict) and isinstance(replayed, dict):
        out: dict[str, str] = {}
        for key in [*sent, *(k for k in replayed if k not in sent)]:
            where = f"{path}.{key}" if path else key
            if key not in replayed:
                out[where] = "dropped"
            elif key not in sent:
                out[where] = "added"
            else:
                out.update(differences(sent[key], replayed[key], where))
        return out
    if isinstance(sent, list) and isinstance(replayed, list) and len(sent) == len(replayed):
        out = {}
        for i, (a, b) in enumerate(zip(sent, replayed, strict=True)):
            out.update(differences(a, b, f"{path}[{i}]"))
        return out
    return (
        {} if sent == replayed else {path: f"{orjson.dumps(sent)[:80]!r} -> {orjson.dumps(replayed)[:80]!r}"}
    )


def test_every_recorded_request_is_a_case() -> None:
    """30 golden requests and 47 recorded ones; a new golden or recording joins by its name."""
    providers = Counter(case.provider for case in CASES)
    assert {p: n for p, (_, n) in EXACT.items()} == dict(providers)
    assert len(_golden_cases()) >= 30 and len(_recorded_cases()) >= 47


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_recorded_request_replays_to_its_provider_as_sent(
    case: Case, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        replayed = _replay(case)
    allowed = ALLOWED.get((case.provider, case.name), {})
    assert differences(case.body, replayed).keys() == allowed.keys()
    for record in caplog.records:  # a loss a replay reports, it reports with the five §7.3 fields
        if record.name.startswith("metis.adapters"):
            assert all(getattr(record, field, None) for field in FIVE), record.getMessage()


def test_the_counts_are_the_documented_ones() -> None:
    exact = Counter(case.provider for case in CASES if not differences(case.body, _replay(case)))
    assert {p: k for p, (k, _) in EXACT.items()} == {p: exact.get(p, 0) for p in EXACT}


# --- what a kept spelling does once the conversation moves on ------------------------------


def _case(provider: str, name: str) -> Case:
    (case,) = [c for c in CASES if (c.provider, c.name) == (provider, name)]
    return case


def _warnings(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        {f: getattr(r, f, None) for f in FIVE}
        for r in caplog.records
        if r.name.startswith("metis.adapters") and r.levelno == logging.WARNING
    ]


def test_mistral_tool_names_follow_the_call_and_a_name_of_its_own_is_a_listed_drop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = copy.deepcopy(_case("mistral", "request_tools.json").body)
    imported = _import(Case("mistral", "request_tools.json", body))
    assert imported.dropped == [] and imported.options.provider_options["mistral"]["metis"] == {
        "tool_names": True
    }
    to_openai = dataclasses.replace(imported.options, model="openai:gpt-4.1", provider_options={})
    assert "name" not in adapters.get("openai").to_wire(imported.messages, [], to_openai)["messages"][3]
    body["messages"][3]["name"] = "weather"  # not the function its call called
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        other = _import(Case("mistral", "request_tools.json", body))
    assert other.dropped == [
        {
            "path": "messages[3].name",
            "value": "weather",
            "reason": "a tool message's name that is not its call's function has no canonical place",
        }
    ]
    assert "tool_names" not in other.options.provider_options["mistral"].get("metis", {})
    (said,) = [w for w in _warnings(caplog) if w["block_type"] == "name"]
    assert said["message_id"] == "messages[3]" and said["adapter"] == "mistral" and all(said.values())


def test_anthropic_kept_turn_spelling_goes_to_anthropic_alone_and_yields_to_edits() -> None:
    imported = _import(_case("anthropic", "request_recorded.json"))
    spelled = imported.options.provider_options["anthropic"]["metis"]["spelled"]
    (system_turn,) = [m for m in imported.messages if spelled.get(m.id, {}).get("system_turn")]
    assert system_turn.role.value == "system" and system_turn.metadata.provider_raw is None
    openai = adapters.get("openai").to_wire(
        imported.messages,
        [],
        dataclasses.replace(imported.options, model="openai:gpt-4.1", provider_options={}),
    )
    assert [m["role"] for m in openai["messages"]].count("system") == 2  # a system message, as any
    edited = imported.messages[1].model_copy(
        update={"content": [*imported.messages[1].content, imported.messages[1].content[0]]}
    )
    messages = [imported.messages[0], edited, *imported.messages[2:]]
    body = adapters.get("anthropic").to_wire(messages, imported.tools, imported.options)
    assert (
        body["messages"][0]["content"]
        == [{"type": "text", "text": "What's the weather in Paris and Rome?"}] * 2
    )
    assert body["messages"][4] == {"role": "system", "content": "Keep answers under 20 words."}


def test_responses_fresh_sends_keep_store_and_include_and_a_recorded_store_stays() -> None:
    imported = _import(_case("responses", "request_text.json"))
    assert imported.options.provider_options["responses"]["metis"]["stateless"] is False
    fresh = dataclasses.replace(imported.options, provider_options={})
    body = adapters.get("responses").to_wire(imported.messages, [], fresh)
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    stored = copy.deepcopy(_case("responses", "request_text.json").body) | {"store": True}
    again = _replay(Case("responses", "request_text.json", stored))
    assert again["store"] is True and "include" not in again


def test_a_responses_item_reference_goes_back_before_its_message_and_is_reported_elsewhere(
    caplog: pytest.LogCaptureFixture,
) -> None:
    imported = _import(_case("responses", "request_every_shape.json"))
    (after,) = imported.options.provider_options["responses"]["metis"]["items_before"]
    assert [m.id for m in imported.messages].index(after) == 4  # the developer message after it
    moved = [*imported.messages[:3], *imported.messages[4:]]  # a turn before it left out
    body = adapters.get("responses").to_wire(moved, imported.tools, imported.options)
    at = [i for i, item in enumerate(body["input"]) if item.get("type") == "item_reference"]
    assert at and body["input"][at[0] + 1]["role"] == "developer"  # still before its message
    to_anthropic = dataclasses.replace(imported.options, model="anthropic:claude-sonnet-4-6")
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        adapters.get("anthropic").to_wire(imported.messages, [], to_anthropic)
    said = [w for w in _warnings(caplog) if "metis.items_before" in str(w["reason"])]
    assert len(said) == 1 and all(said[0].values()) and said[0]["block_type"] == "option"


def test_gemini_spelling_yields_to_a_changed_conversation() -> None:
    imported = _import(_case("gemini", "request_recorded.json"))
    first = imported.messages[1]  # contents[0], recorded without a role
    assert first.role.value == "user"
    moved = [imported.messages[0], *imported.messages[2:]]  # the roleless turn gone: index 0 is a model turn
    body = adapters.get("gemini").to_wire(moved, imported.tools, imported.options)
    assert body["contents"][0]["role"] == "model"
    kinds = [sorted(part) for part in body["contents"][0]["parts"]]
    assert all("function_call" not in kind for kind in kinds)  # recorded snake parts stood elsewhere
