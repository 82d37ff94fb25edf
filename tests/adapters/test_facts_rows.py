"""The facts row as one shape: typed template slots, error bodies read through the declared
wire shapes, and one way from a provider's error to a stream's ErrorEvent.

Each test here names what the old code did wrong where it did (NUL-string placeholders that a
constant equal to their text was taken for; error bodies read by key paths beside the
declared shapes, so a malformed stream error became an event instead of a WireFormatError).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from typing import Any

import metis.adapters
import pytest
from metis.adapters._kit.facts import (
    SCHEMA,
    SCHEMA_NAME,
    TOOL_NAME,
    ProviderFacts,
    Slot,
    ToolChoice,
    fill,
)
from metis.adapters._kit.options import OutputSchema
from metis.adapters.responses.facts import DIALECTS
from metis.errors import ProviderError, WireFormatError
from metis_schema.v3 import ErrorEvent

from tests.adapters.test_adapter_contract import context

PROVIDERS = ("anthropic", "openai", "openrouter", "mistral", "responses", "gemini", "ollama")
OLD_MARKERS = ("\x00tool-name\x00", "\x00schema\x00", "\x00schema-name\x00")
"""The NUL-delimited text the placeholders used to be."""


def _row(**fields: Any) -> ProviderFacts:
    """A row like Anthropic's with `fields` in place of its own."""
    return dataclasses.replace(metis.adapters.get("anthropic").facts, **fields)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for inner in value.values() for s in _strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in _strings(inner)]
    return [value] if isinstance(value, str) else []


# --- typed slots ---------------------------------------------------------------------------------


def test_a_template_constant_spelled_like_the_old_placeholder_is_written_verbatim() -> None:
    """The old placeholders were strings: a template constant equal to `"\\x00tool-name\\x00"`
    was replaced by the tool's name. A slot is an object no string equals."""
    row = _row(tool_choice={ToolChoice.tool: {"type": "tool", "name": TOOL_NAME, "tag": "\x00tool-name\x00"}})
    assert row.tool_choice_to_wire("lookup") == {"type": "tool", "name": "lookup", "tag": "\x00tool-name\x00"}


def test_a_schema_template_constant_spelled_like_the_old_placeholder_is_kept() -> None:
    row = _row(output_schema={"format": {"schema": SCHEMA, "note": "\x00schema-name\x00"}})
    body: dict[str, Any] = {}
    row.output_schema_to_wire(OutputSchema(schema={"type": "object"}, name="answer"), body)
    assert body == {"format": {"schema": {"type": "object"}, "note": "\x00schema-name\x00"}}


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "ollama"])
@pytest.mark.parametrize("name", OLD_MARKERS)
def test_a_tool_named_like_a_placeholder_goes_out_and_comes_back_verbatim(provider: str, name: str) -> None:
    facts = metis.adapters.get(provider).facts
    wire = facts.tool_choice_to_wire(name)
    assert name in _strings(json.loads(json.dumps(wire)))  # plain JSON: no slot left in it
    fields = {facts.tool_choice_field: wire}
    assert facts.take_tool_choice(fields) == name
    assert fields == {}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_output_schema_strings_like_a_placeholder_round_trip(provider: str) -> None:
    facts = metis.adapters.get(provider).facts
    schema = OutputSchema(schema={"type": "object", "description": "\x00schema\x00"}, name="\x00schema\x00")
    body: dict[str, Any] = {}
    facts.output_schema_to_wire(schema, body)
    assert json.loads(json.dumps(body)) == body  # plain JSON: no slot left in it
    taken = facts.take_output_schema(body)
    assert taken is not None and taken.schema == schema.schema
    assert taken.name in ("output", "\x00schema\x00")  # "output": the default, where no name is sent


def test_fill_leaves_out_unset_slots_and_copies_constants() -> None:
    template = {"a": SCHEMA, "b": SCHEMA_NAME, "c": [TOOL_NAME, "x"], "d": {"e": SCHEMA_NAME}}
    assert fill(template, {SCHEMA: {"k": 1}, TOOL_NAME: "t"}) == {"a": {"k": 1}, "c": ["t", "x"], "d": {}}
    assert Slot("tool_name", str) == TOOL_NAME


# --- error bodies through the declared shapes ----------------------------------------------------

STREAM_ERRORS: dict[str, tuple[bytes, Any, int | None]] = {
    "anthropic": (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        None,
    ),
    "openai": (
        b'data: {"error": {"message": "Rate limit reached", "type": "tokens", "param": null}}\n\n',
        {"error": {"message": "Rate limit reached", "type": "tokens", "param": None}},
        None,
    ),
    "openrouter": (
        b'data: {"error": {"code": 502, "message": "Upstream failed", "metadata": {"provider_name": "Acme"}}}\n\n',
        {"error": {"code": 502, "message": "Upstream failed", "metadata": {"provider_name": "Acme"}}},
        None,
    ),
    "responses": (
        b'event: error\ndata: {"type": "error", "code": "server_error", "message": "boom", "param": null,'
        b' "sequence_number": 1}\n\n',
        {"error": {"type": "server_error", "message": "boom"}},
        None,
    ),
    "gemini": (
        b'data: {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}\n\n',
        {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
        503,
    ),
    "ollama": (
        b'{"error": "server busy, please try again."}\n',
        {"error": "server busy, please try again."},
        None,
    ),
}


@pytest.mark.parametrize("provider", sorted(STREAM_ERRORS))
def test_a_stream_error_says_what_parse_error_says_of_the_same_body(provider: str) -> None:
    """One reading for both: the event's code and retryability are the ProviderError's, its
    message the provider's own text (the ProviderError's message after `<type>: `)."""
    stream, body, status = STREAM_ERRORS[provider]
    adapter = metis.adapters.get(provider)
    events = list(adapter.stream_response([stream], context(provider)))
    (event,) = [e for e in events if isinstance(e, ErrorEvent)]
    error = adapter.parse_error(body, status)
    assert (event.code, event.retryable, event.provider) == (error.error_type, error.retryable, provider)
    assert error.message.endswith(f"{error.error_type}: {event.message}")


@pytest.mark.parametrize(
    ("provider", "stream", "path"),
    [
        ("ollama", b'{"error": 42}\n', "stream line 1.error"),
        ("ollama", b'{"error": ["out", "of", "memory"]}\n', "stream line 1.error"),
        (
            "responses",
            b'data: {"type": "response.failed", "response": {"output": [], "error": "x"}}\n\n',
            None,
        ),
        ("gemini", b'data: {"error": {"code": 503, "status": 7}}\n\n', "stream[0].error.status"),
    ],
)
def test_a_stream_error_of_the_wrong_shape_is_a_wire_format_error_at_its_path(
    provider: str, stream: bytes, path: str | None
) -> None:
    """The old code read a stream's error by key paths and made an event of whatever it found
    (Ollama's `{"error": 42}` became an `unknown_error` whose message was the line's JSON)."""
    adapter = metis.adapters.get(provider)
    with pytest.raises(WireFormatError) as caught:
        list(adapter.stream_response([stream], context(provider)))
    assert caught.value.provider == provider
    if path is not None:
        assert caught.value.path == path


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("anthropic", {"type": "error", "error": {"type": 529, "message": "Overloaded"}}),
        ("gemini", {"error": {"code": "503", "message": "overloaded", "status": "UNAVAILABLE"}}),
        ("ollama", {"error": 42}),
    ],
)
def test_an_http_error_body_not_of_the_declared_shape_is_reported_by_its_text(
    provider: str, body: Any
) -> None:
    """`parse_error` never raises; a body not of the provider's declared error shape is not
    read by key paths (the old code took Anthropic's `type: 529` as the type "529") but
    reported by its excerpt, typed by its HTTP status."""
    error = metis.adapters.get(provider).parse_error(body, 500)
    assert isinstance(error, ProviderError)
    assert error.error_type == "http_500" and error.retryable
    assert error.message == f"HTTP 500 http_500: {json.dumps(body, separators=(',', ':'))}"


def test_gemini_error_arrays_are_read_through_the_declared_shape() -> None:
    """The array-streaming endpoint's error comes as the first element of an array; the
    declared shape unwraps it (the old row subclass overrode `parse_error` to do so)."""
    facts = metis.adapters.get("gemini").facts
    assert type(facts) is ProviderFacts
    body = [{"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}, {"ignored": True}]
    error = facts.parse_error(json.dumps(body), 503)
    assert (error.error_type, error.retryable, error.message) == (
        "UNAVAILABLE",
        True,
        "HTTP 503 UNAVAILABLE: overloaded",
    )


def test_a_failed_response_names_its_kind_by_code_through_the_row() -> None:
    """Responses errors that carry no `type` (a failed response, an `error` event) name their
    kind in `code`: the row's error hook reads it, not each caller by hand."""
    facts = metis.adapters.get("responses").facts
    error = facts.parse_error({"error": {"code": "rate_limit_exceeded", "message": "slow down"}})
    assert (error.error_type, error.retryable) == ("rate_limit_exceeded", True)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_row_reads_errors_through_a_declared_shape(provider: str) -> None:
    envelope = metis.adapters.get(provider).facts.error
    assert callable(envelope.fields)
    assert not hasattr(envelope, "type_at") and not hasattr(envelope, "message_at")


# --- one row shape -------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_is_a_plain_row(provider: str) -> None:
    """No subclass with methods (the old GeminiFacts), no dialect object wrapping a row (the
    old ChatDialect, ResponsesDialect): the adapter's facts are a ProviderFacts itself."""
    assert type(metis.adapters.get(provider).facts) is ProviderFacts


def test_no_module_declares_another_row_shape() -> None:
    rows = [
        obj
        for info in pkgutil.walk_packages(metis.adapters.__path__, "metis.adapters.")
        for obj in vars(importlib.import_module(info.name)).values()
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj is not ProviderFacts
    ]
    assert rows  # the walk found the package's dataclasses
    assert not [cls for cls in rows if issubclass(cls, ProviderFacts)]
    wrappers = [cls for cls in rows if any("ProviderFacts" in str(f.type) for f in dataclasses.fields(cls))]
    assert not wrappers


def test_dialect_fields_are_on_the_rows() -> None:
    openai, openrouter, mistral = (metis.adapters.get(p).facts for p in ("openai", "openrouter", "mistral"))
    assert openai.stream_usage_option and openai.replays_plain_reasoning and not openai.cache_control
    assert openrouter.reasoning_details and openrouter.cache_control and openrouter.video_parts
    assert mistral.thinking_parts and mistral.prefix_marker and not mistral.file_media_types
    assert not metis.adapters.get("anthropic").facts.reasoning_details  # the defaults elsewhere
    assert {row.dialect: row.request_store for row in DIALECTS.values()} == {
        "openai": False,
        "open-responses": None,
    }
    assert all(type(row) is ProviderFacts for row in DIALECTS.values())


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "anthropic"])
def test_a_plain_text_error_body_is_read_as_its_message(provider: str) -> None:
    """`{"error": "<text>"}` (Ollama's own; a gateway's in front of the others) is declared in
    each shape that meets it, so the message is the text, as before. Anthropic's declared
    envelope has no such form (a stream `error` event must hold the object): its excerpt."""
    error = metis.adapters.get(provider).parse_error({"error": "upstream down"}, 502)
    assert error.message == "HTTP 502 http_502: upstream down" and error.retryable
