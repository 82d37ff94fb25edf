"""Values no JSON text can hold, handed to metis as Python values, give typed errors that
say what and where (issue 29, item 11). One test per site the extended fuzzer
(`python -m bench.fuzz`, tests/support/fuzz_api.py) found escaping untyped, each failing on the
code before the fix: a lone surrogate in a reply, a stream piece, an error body, a message,
a key; an integer past 4,300 digits in an error body, a document, an option; nesting past
the recursion limit in an error body and through the migrations; a `critical_blocks` of
objects; NaN and infinities through hashing, options, routing policies and `Session.send`.

The decision (`metis._json` module doc): a lone surrogate has no UTF-8 form, so no JSON
text (RFC 8259 §8.1, I-JSON RFC 7493 §2.1); a message holding one could be neither hashed
nor stored nor sent. It is refused where it enters, never replaced.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis import _json, adapters
from metis.adapters import AdapterOptions
from metis.canonical import dump_message, message_hash, read_message
from metis.client import Client
from metis.errors import DocumentError, MetisError, NotJsonError, ProviderError, StoreError, WireFormatError
from metis.ids import ToolIdMap
from metis.migrations import migrate_document
from metis.store import Store
from metis.validation import validate_document
from metis_schema import CURRENT_VERSION

from tests.support.fuzz_support import MODELS, PROVIDERS, context, dumps, parsed, seeds
from tests.support.store_support import assistant, assistant_meta, message, user

SURROGATE = "\ud800"
HUGE = 10**4400
SESSION = "sess_hostile_values"


def _deep(depth: int, leaf: Any) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


def _printable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _with_surrogate_text(value: Any) -> Any:
    """`value` with a lone surrogate added to every string under a `text` or `content` key."""
    if isinstance(value, dict):
        return {
            key: (
                item + SURROGATE
                if key in ("text", "content") and isinstance(item, str)
                else _with_surrogate_text(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_with_surrogate_text(item) for item in value]
    return value


# --- wire bodies handed in as Python values ---------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_lone_surrogate_in_a_reply_is_a_wire_format_error_at_its_place(provider: str) -> None:
    """Was a TypeError from orjson (measuring provider_raw) or pydantic's ValidationError."""
    bodies = (parsed(seed.data) for seed in seeds(provider, "response"))
    body = next(hostile for body in bodies if (hostile := _with_surrogate_text(body)) != body)
    with pytest.raises(WireFormatError) as caught:
        adapters.get(provider).from_wire_response(body, context(provider))
    assert "lone surrogate" in str(caught.value) and caught.value.path
    assert _printable(str(caught.value))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stream_piece_of_text_with_a_lone_surrogate_is_a_wire_format_error(provider: str) -> None:
    """`stream_response` takes str pieces too; one holding a lone surrogate was a
    UnicodeEncodeError from `_json.loads`."""
    seed = seeds(provider, "stream")[0]
    text = seed.data.decode()
    at = text.index('"', text.index("{")) + 1  # inside the first JSON string
    with pytest.raises(WireFormatError, match="lone surrogate"):
        adapters.get(provider).assemble_stream([text[:at] + SURROGATE + text[at:]], context(provider))


def test_loads_refuses_text_holding_a_lone_surrogate() -> None:
    with pytest.raises(_json.JSONDecodeError, match="lone surrogate"):
        _json.loads('{"a": "x' + SURROGATE + '"}')


# --- error bodies -------------------------------------------------------------------------------

ERROR_BODIES: list[tuple[str, Any]] = [
    ("huge integer message", {"error": {"message": HUGE, "type": "invalid_request_error"}}),
    ("huge integer type", {"error": {"message": "m", "type": HUGE, "code": HUGE, "status": HUGE}}),
    ("nested past the recursion limit", {"error": {"message": _deep(5000, 1), "type": _deep(5000, 1)}}),
    ("the whole body nested past the limit", [_deep(5000, "x")]),
    ("lone surrogate in the message", {"error": {"message": "bad " + SURROGATE, "type": "x" + SURROGATE}}),
    ("text body with a lone surrogate", "<html>bad gateway " + SURROGATE + "</html>"),
    ("NaN in the body", {"error": {"message": "m", "details": [float("nan")]}}),
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("case", "body"), ERROR_BODIES, ids=[case for case, _ in ERROR_BODIES])
def test_parse_error_builds_a_printable_provider_error_from_any_body(
    provider: str, case: str, body: Any
) -> None:
    """parse_error never raises (it was ValueError on a 4,400-digit integer, RecursionError
    on deep nesting, from the excerpt's repr), and what it reports can be printed, logged
    and written as JSON (a lone surrogate was passed through)."""
    error = adapters.get(provider).parse_error(body, 400)
    assert isinstance(error, ProviderError)
    assert _printable(str(error))
    _json.dumps(error.body if not isinstance(error.body, bytes) else None)


# --- documents ----------------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    return dump_message(assistant(SESSION))


def test_critical_blocks_holding_objects_are_a_document_error() -> None:
    """`set(critical_blocks)` raised TypeError (unhashable dict) before validation."""
    doc = _doc()
    doc["metadata"]["critical_blocks"] = [{}]
    doc["content"].append({"type": "zz_future_block"})  # a drop remaps critical_blocks
    with pytest.raises(DocumentError, match=r"critical_blocks\[0\]"):
        read_message(doc)


def test_a_v1_document_with_metadata_nested_a_thousand_deep_is_migrated_without_recursion() -> None:
    """The migration's deepcopy raised RecursionError at about 1,000 levels; JSON text may
    nest 1,024 deep. The document reaches validation (typed, whatever it says)."""
    doc = _doc()
    doc["schema_version"] = 1
    doc["metadata"]["provider_raw"] = _deep(1000, 1)
    migrated = migrate_document(doc)
    assert migrated["schema_version"] == CURRENT_VERSION and migrated is not doc
    with contextlib.suppress(MetisError):  # typed, whatever it says
        read_message(dumps(doc))  # as stored text (the standard library writes it that deep)


def test_nesting_pydantic_cannot_report_on_is_a_document_error() -> None:
    """A typed field nested near the recursion limit: pydantic's error repr raised RecursionError."""
    doc = _doc()
    doc["metadata"]["routing"] = _deep(990, 1)
    with pytest.raises(DocumentError):
        read_message(doc)


@pytest.mark.parametrize("version", [HUGE, -HUGE], ids=["positive", "negative"])
def test_a_schema_version_past_4300_digits_is_a_document_error(version: int) -> None:
    """Its repr in the NewerSchemaError / MigrationError message raised ValueError."""
    doc = _doc()
    doc["schema_version"] = version
    with pytest.raises(DocumentError, match="schema_version"):
        read_message(doc)


@pytest.mark.parametrize("where", ["content", "citations"])
def test_a_block_tag_past_4300_digits_is_a_document_error(where: str) -> None:
    doc = _doc()
    if where == "content":
        doc["content"][0]["type"] = HUGE
    else:
        doc["content"][0]["citations"] = [{"type": HUGE}]
    with pytest.raises(DocumentError, match=r"content\[0\]"):
        read_message(doc)


def test_validate_document_reports_an_integer_past_4300_digits_at_its_place() -> None:
    """The schema validator's message reprs the value: ValueError."""
    doc = _doc()
    doc["metadata"]["usage"]["input_tokens"] = HUGE
    (problem,) = validate_document(doc)
    assert problem.path == "metadata.usage.input_tokens" and "4,300 digits" in problem.problem


# --- messages built in code ------------------------------------------------------------------


def test_hashing_a_message_with_a_lone_surrogate_names_the_message_and_the_place() -> None:
    """Was orjson's TypeError ('str is not valid UTF-8')."""
    built = user(SESSION, text="hi " + SURROGATE)
    with pytest.raises(NotJsonError, match=rf"message {built.id}: content\[0\]\.text: a lone surrogate"):
        message_hash(built)


def test_hashing_a_message_with_nan_in_provider_raw_is_typed() -> None:
    """Was a bare ValueError."""
    built = assistant(SESSION, provider_raw={"x": float("nan")})
    with pytest.raises(NotJsonError, match=r"metadata\.provider_raw\.x: NaN"):
        from metis.canonical import message_to_json

        message_to_json(built)


def _tool_call(arguments: dict[str, Any]) -> Any:
    content = [{"type": "tool_use", "id": "tu_01M8F4Q3PH953JYED1WS83J21K", "name": "f", "input": arguments}]
    return message(SESSION, "assistant", content, assistant_meta())


def test_a_key_with_a_lone_surrogate_is_refused_not_replaced(tmp_path: Path) -> None:
    """pydantic's JSON mode wrote the key as U+FFFD without a word: two messages hashed
    alike, and the store kept a message different from the one given."""
    built = _tool_call({"k" + SURROGATE: 1})
    with pytest.raises(NotJsonError, match="a key holding a lone surrogate"):
        message_hash(built)
    with Store.open(tmp_path / "s.sqlite3") as store:
        store.create_session("/w", session_id=SESSION)
        with pytest.raises(StoreError, match="a key holding a lone surrogate"):
            store.append(built)
        assert store.load_session(SESSION) == []


@pytest.mark.parametrize("provider", adapters.names())
def test_the_token_estimate_of_a_call_with_a_huge_integer_is_typed(provider: str) -> None:
    """The estimate wrote the arguments with json.dumps: ValueError past 4,300 digits (Gemini,
    Ollama); the one estimator refuses them for every provider, naming the call."""
    with pytest.raises(NotJsonError, match=r"tool_use tu_\w+ input: n: an integer of more than 4,300"):
        adapters.get(provider).estimate_input_tokens([_tool_call({"n": HUGE})], [])


def test_anthropic_replay_reads_kept_citations_of_another_shape_as_nothing_kept() -> None:
    """provider_raw is the caller's to build; a kept citation that is not an object was an
    AttributeError in to_wire."""
    (seed,) = (seed for seed in seeds("anthropic", "response") if seed.name == "response_citations.json")
    reply = adapters.get("anthropic").from_wire_response(parsed(seed.data), context("anthropic"))
    raw = copy.deepcopy(reply.metadata.provider_raw) or {}
    assert raw["cites"]  # the seed kept what its url citations need back
    raw["cites"] = {key: [7 for _ in kept] for key, kept in raw["cites"].items()}
    hostile = reply.model_copy(update={"metadata": reply.metadata.model_copy(update={"provider_raw": raw})})
    options = AdapterOptions(model=MODELS["anthropic"], session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    adapters.get("anthropic").to_wire([user(SESSION), hostile], [], options)


# --- options, policies, sends ----------------------------------------------------------------

HOSTILE_OPTIONS: list[dict[str, Any]] = [
    {"temperature": float("nan")},
    {"top_p": float("inf")},
    {"max_tokens": HUGE},
    {"thinking_budget": HUGE},
    {"stop": ["EN" + SURROGATE + "D"]},
    {"extra": {"metadata": {"user": float("-inf")}}},
    {"provider_options": {"openai": {"seed": HUGE}}},
]


@pytest.mark.parametrize("fields", HOSTILE_OPTIONS, ids=lambda f: next(iter(f)))
def test_request_options_json_cannot_carry_are_refused_as_they_enter(fields: dict[str, Any]) -> None:
    """They went into the body: ValueError when the client wrote it, ValueError from an
    f-string of the number, AttributeError reading provider options, or (a 4,400-digit
    thinking budget) a request sent with it."""
    name = next(iter(fields))
    with pytest.raises(NotJsonError, match=f"request option {name}"):
        AdapterOptions(model=MODELS["openai"], session_id=SESSION, tool_ids=ToolIdMap(SESSION), **fields)


@pytest.mark.parametrize("fields", HOSTILE_OPTIONS[:5], ids=lambda f: next(iter(f)))
def test_session_send_with_such_an_option_sends_and_stores_nothing(
    fields: dict[str, Any], tmp_path: Path
) -> None:
    """`Session.send(temperature=nan)` stored the user message, then failed writing the body
    with a bare ValueError."""
    sent: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500, json={"error": {"message": "must not be reached"}})

    with (
        Store.open(tmp_path / "s.sqlite3") as store,
        Client(store, transport=httpx.MockTransport(handle), api_keys={"openai": "test-key-0000"}) as client,
    ):
        session = client.session(MODELS["openai"], workspace=tmp_path)
        with pytest.raises(NotJsonError):
            session.send("hi", **fields)
        assert sent == [] and store.load_session(session.id) == []


@pytest.mark.parametrize(
    "policy",
    [{"max_cost_usd": float("nan")}, {"fallbacks": [HUGE]}, {"name": "p" + SURROGATE}],
    ids=["nan", "huge", "surrogate"],
)
def test_a_routing_policy_json_cannot_carry_is_refused_naming_the_place(
    policy: dict[str, Any], tmp_path: Path
) -> None:
    """NaN and the long integer were bare ValueErrors; the surrogate a StoreError that did not say where."""
    with (
        Store.open(tmp_path / "s.sqlite3") as store,
        pytest.raises(NotJsonError, match=r"routing_policy: \w+"),
    ):
        store.create_session("/w", routing_policy=policy)
