"""Golden files of both Chat Completions dialects, through tests/support/golden.py's one harness.

Every wire input under tests/golden/openai/ and tests/golden/openrouter/ (replies, streams,
recorded requests, error bodies) is read by its dialect's adapter and compared with the
expected output beside it (METIS_UPDATE_GOLDEN=1 rewrites, then review the diff). Streams
are also fed split anywhere: the events must not depend on where the bytes were cut. Where
a stream and a reply golden pair up (`stream_<case>` beside `response_<case>`, the same
generation), the assembled stream equals the parsed reply, whatever blocks it holds.

Sources of the web-search cases (url_citation annotations): OpenRouter's annotation schema
as documented at https://openrouter.ai/docs/features/web-search (`url`, `title`, `content`
"added by OpenRouter if available", `start_index`, `end_index`; in a stream, the annotations
come in a delta of their own with the finish), and OpenAI's search-preview Chat Completions
reply (https://platform.openai.com/docs/guides/tools-web-search?api-mode=chat: `url_citation`
with `url`, `title`, `start_index`, `end_index`; openai-python `chat_completion_message.py`
`Annotation`).
"""

from __future__ import annotations

import pytest
from metis import adapters
from metis.ids import ToolIdMap
from metis_schema.v3 import MessageStatus

from tests.support import golden
from tests.support.contracts import openai as openai_contract
from tests.support.contracts import openrouter as openrouter_contract
from tests.support.openai_chat_support import (
    SESSION,
    canonical,
    chunkings,
    context,
    events_document,
    fixed_tool_ids,
    import_document,
    normalize_tool_ids,
    recorded,
)

__all__ = ["fixed_tool_ids"]  # the fixture is used by name

DIALECTS = ("openai", "openrouter")
CONTRACTS = {"openai": openai_contract, "openrouter": openrouter_contract}
SONNET = "openrouter:anthropic/claude-sonnet-4.6"
MODELS = {
    "openai": {},
    "openrouter": {
        "anthropic": SONNET,
        "gemini": "openrouter:google/gemini-2.5-flash",
        "openai": "openrouter:openai/gpt-5-mini",
        "length_error": SONNET,
        "web_search": "openrouter:openai/gpt-5-mini",
    },
}
"""The model each recorded case (`response_<case>`, `stream_<case>`) was asked; else the default."""
DEFAULT_MODEL = {"openai": "openai:gpt-4.1", "openrouter": SONNET}


def cases(kind: str) -> list[tuple[str, str]]:
    return [(provider, name) for provider in DIALECTS for name in golden.inputs(provider, kind)]


def model(provider: str, name: str) -> str:
    case = name.split(".", 1)[0].split("_", 1)[1]
    return MODELS[provider].get(case, DEFAULT_MODEL[provider])


@pytest.mark.parametrize(("provider", "name"), cases("response"))
def test_reply_golden(provider: str, name: str, fixed_tool_ids: None) -> None:
    body = recorded(provider, name)
    CONTRACTS[provider].check_response(body)
    message = adapters.get(provider).from_wire_response(body, context(model(provider, name)))
    golden.check(provider, golden.expected_name(name), canonical(message))
    assert message.metadata.status == MessageStatus.complete


@pytest.mark.parametrize(("provider", "name"), cases("stream"))
def test_stream_events_golden(provider: str, name: str, fixed_tool_ids: None) -> None:
    adapter = adapters.get(provider)
    data = recorded(provider, name)
    events = events_document(list(adapter.stream_response([data], context(model(provider, name)))))
    golden.check(provider, golden.expected_name(name), events)
    for how, pieces in chunkings(data).items():
        ids = ToolIdMap(SESSION)
        split = list(adapter.stream_response(pieces, context(model(provider, name), ids)))
        # each run mints its own canonical tool ids: compare the events with those set aside
        assert _without_ids(events_document(split)) == _without_ids(events), how


@pytest.mark.parametrize(("provider", "name"), cases("request"))
def test_request_import_golden(provider: str, name: str, fixed_tool_ids: None) -> None:
    body = recorded(provider, name)
    imported = adapters.get(provider).from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    golden.check(provider, golden.expected_name(name), import_document(imported))


@pytest.mark.parametrize(("provider", "name"), cases("error"))
def test_error_golden(provider: str, name: str) -> None:
    golden.check_error(provider, name)


def paired() -> list[tuple[str, str]]:
    """(provider, case) of every stream golden with a reply golden of the same case."""
    return [
        (provider, name.split(".", 1)[0].split("_", 1)[1])
        for provider, name in cases("stream")
        if (golden.folder(provider) / f"response_{name.split('.', 1)[0].split('_', 1)[1]}.json").exists()
    ]


@pytest.mark.parametrize(("provider", "case"), paired())
def test_an_assembled_stream_equals_its_reply(provider: str, case: str) -> None:
    adapter = adapters.get(provider)
    stream = next(n for n in golden.inputs(provider, "stream") if n.startswith(f"stream_{case}."))
    ids_whole = ToolIdMap(SESSION)
    whole = adapter.from_wire_response(
        recorded(provider, f"response_{case}.json"), context(model(provider, stream), ids_whole)
    )
    expected = normalize_tool_ids(canonical(whole), ids_whole, provider)
    for how, pieces in chunkings(recorded(provider, stream)).items():
        ids = ToolIdMap(SESSION)
        message = adapter.assemble_stream(pieces, context(model(provider, stream), ids))
        assert normalize_tool_ids(canonical(message), ids, provider) == expected, how


def _without_ids(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in event.items() if k != "id"} for event in events]
