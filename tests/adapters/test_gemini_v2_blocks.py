"""Schema v2 blocks through the Gemini adapter (issue 15): document, audio and video as
`inlineData` / `fileData` parts; Gemini's code execution (`executableCode` /
`codeExecutionResult`) as server_tool_use / server_tool_result, replayed to Gemini only;
`groundingMetadata` as url citations. Both directions, whole replies, streams and imports.

Part shapes: https://ai.google.dev/gemini-api/docs/document-processing (inline PDFs and File API
files), .../audio, .../video (YouTube URLs as fileData), .../code-execution, .../google-search.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import metis.adapters
import pytest
from metis.errors import CriticalBlockError
from metis.ids import ToolIdMap
from metis_schema.v3 import DocumentBlock, ServerToolResultBlock, ServerToolUseBlock, TextBlock, UrlCitation

from tests.support.gemini_support import (
    ADAPTER,
    SESSION,
    assistant,
    chunked,
    context,
    message,
    normalized,
    options,
    sse,
    to_wire,
    tool_result,
    user,
)

PDF = "JVBERi0xLjQKJcfsj6IK"
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEA"
FILE_URI = "https://generativelanguage.googleapis.com/v1beta/files/b4x9q2"
YOUTUBE = "https://www.youtube.com/watch?v=9hE5-98ZeCg"


def _source(kind: str, data: str, provider: str | None = None) -> dict[str, Any]:
    source = {"kind": kind, "data": data}
    if provider is not None:
        source["provider"] = provider
    return source


def _warns(caplog: pytest.LogCaptureFixture, block_type: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "block_type", None) == block_type]


# --- media out ---------------------------------------------------------------------------------


def test_media_blocks_become_inline_data_and_file_data(tmp_path: Path) -> None:
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    turn = user(
        "Compare these.",
        {"type": "document", "source": _source("base64", PDF), "media_type": "application/pdf"},
        {
            "type": "document",
            "source": _source("url", "https://example.com/notes.txt"),
            "media_type": "text/plain",
        },
        {
            "type": "document",
            "source": _source("file_id", FILE_URI, "gemini"),
            "media_type": "application/pdf",
        },
        {"type": "audio", "source": _source("base64", WAV), "media_type": "audio/wav"},
        {"type": "video", "source": _source("url", YOUTUBE), "media_type": "video/mp4"},
        {"type": "video", "source": _source("file_ref", "clip.mp4"), "media_type": "video/mp4"},
        {
            "type": "audio",
            "source": _source("url", f"data:audio/mpeg;base64,{WAV}"),
            "media_type": "audio/mpeg",
        },
    )
    body = to_wire([turn], [], options(ToolIdMap(SESSION), workspace=tmp_path))
    assert body["contents"][0]["parts"] == [
        {"text": "Compare these."},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
        {"fileData": {"mimeType": "text/plain", "fileUri": "https://example.com/notes.txt"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": FILE_URI}},
        {"inlineData": {"mimeType": "audio/wav", "data": WAV}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": YOUTUBE}},
        {"inlineData": {"mimeType": "video/mp4", "data": "AAAAGGZ0eXBtcDQy"}},
        {"inlineData": {"mimeType": "audio/mpeg", "data": WAV}},
    ]


def test_another_providers_file_id_is_dropped_and_document_extras_are_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    turn = user(
        "Read.",
        {
            "type": "document",
            "source": _source("file_id", "file_011CNha8iCJcU1wXNR6q4V8w", "anthropic"),
            "media_type": "application/pdf",
        },
        {
            "type": "document",
            "source": _source("base64", PDF),
            "media_type": "application/pdf",
            "title": "ULID spec",
            "citations_enabled": True,
        },
    )
    with caplog.at_level(logging.WARNING, logger="metis"):
        body = to_wire([turn], [], options(ToolIdMap(SESSION)))
    assert body["contents"][0]["parts"] == [
        {"text": "Read."},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
    ]
    warns = _warns(caplog, "document")
    assert len(warns) == 2
    assert "anthropic" in warns[0].reason  # type: ignore[attr-defined]
    assert "title" in warns[1].reason and "citations_enabled" in warns[1].reason  # type: ignore[attr-defined]
    critical = message(
        "user",
        [
            {
                "type": "document",
                "source": _source("file_id", "file_x", "openai"),
                "media_type": "application/pdf",
            }
        ],
        critical_blocks=[0],
    )
    with pytest.raises(CriticalBlockError):
        ADAPTER.to_wire([critical], [], options(ToolIdMap(SESSION)))


# --- media in, and back ------------------------------------------------------------------------


RECORDED_MEDIA = {
    "contents": [
        {
            "role": "user",
            "parts": [
                {"text": "Summarize the report, the call and the talk."},
                {"inline_data": {"mime_type": "application/pdf", "data": PDF}},
                {"inlineData": {"mimeType": "audio/wav", "data": WAV}},
                {"fileData": {"mimeType": "video/mp4", "fileUri": YOUTUBE}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": FILE_URI}},
            ],
        },
        {"role": "model", "parts": [{"functionCall": {"name": "fetch_appendix", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "fetch_appendix",
                        "response": {"output": "attached"},
                        "parts": [{"inlineData": {"mimeType": "application/pdf", "data": PDF}}],
                    }
                }
            ],
        },
    ]
}


def test_recorded_media_import_as_v2_blocks_and_replay_as_recorded() -> None:
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(RECORDED_MEDIA, session_id=SESSION, tool_ids=ids)
    first = imported.messages[0].content
    assert [b.type for b in first] == ["text", "document", "audio", "video", "document"]
    # A File API uri is Gemini's own upload (a gemini file id, dropped by every other
    # adapter); any other uri is a plain URL.
    assert first[4].source.model_dump(exclude_none=True) == {
        "kind": "file_id",
        "data": FILE_URI,
        "provider": "gemini",
    }
    assert first[3].source.model_dump(exclude_none=True) == {"kind": "url", "data": YOUTUBE}
    result = imported.messages[2].content[0]
    assert result.type == "tool_result"
    assert [b.type for b in result.content] == ["text", "document"]
    assert imported.dropped == []
    body = to_wire(imported.messages, imported.tools, imported.options)
    assert body["contents"] == RECORDED_MEDIA["contents"]  # each part spelled as it was sent


def test_audio_in_a_tool_result_is_a_recorded_drop() -> None:
    body = json.loads(json.dumps(RECORDED_MEDIA))
    body["contents"][2]["parts"][0]["functionResponse"]["parts"] = [
        {"inlineData": {"mimeType": "audio/wav", "data": WAV}}
    ]
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [d["path"] for d in imported.dropped] == ["contents[2].parts[0].functionResponse.parts[0]"]


def test_a_search_result_inside_a_tool_result_is_dropped_with_a_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = ToolIdMap(SESSION)
    call = assistant(
        [{"type": "tool_use", "id": "tu_01HZ0000000000000000000001", "name": "search", "input": {}}],
        provider="openai",
        model="openai:gpt-5",
    )
    found = {
        "type": "search_result",
        "source": "https://example.com/ulid",
        "title": "ULID",
        "content": [{"type": "text", "text": "ULIDs are Crockford base32."}],
    }
    with caplog.at_level(logging.WARNING, logger="metis"):
        body = to_wire(
            [user("go"), call, tool_result("tu_01HZ0000000000000000000001", "one hit", extra=[found])],
            [],
            options(ids),
        )
    response = body["contents"][2]["parts"][0]["functionResponse"]
    assert response["response"] == {"output": "one hit"} and "parts" not in response
    assert len(_warns(caplog, "search_result")) == 1


# --- code execution ------------------------------------------------------------------------------

CODE_TURN = [
    {"text": "Let me run it."},
    {"executableCode": {"id": "ce_1", "language": "PYTHON", "code": "print(2**10)"}},
    {"codeExecutionResult": {"id": "ce_1", "outcome": "OUTCOME_OK", "output": "1024\n"}},
    {"executableCode": {"language": "PYTHON", "code": "1/0"}},
    {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"}},
    {"text": "2**10 is 1024; dividing by zero fails."},
]


def test_code_execution_parts_are_server_tool_blocks() -> None:
    body = {"candidates": [{"content": {"role": "model", "parts": CODE_TURN}, "finishReason": "STOP"}]}
    reply = ADAPTER.from_wire_response(body, context())
    kinds = [b.type for b in reply.content]
    assert kinds == [
        "text",
        "server_tool_use",
        "server_tool_result",
        "server_tool_use",
        "server_tool_result",
        "text",
    ]
    use, result, unnamed, failed = reply.content[1:5]
    assert isinstance(use, ServerToolUseBlock) and isinstance(result, ServerToolResultBlock)
    assert (use.id, use.provider, use.name, use.input) == (
        "ce_1",
        "gemini",
        "code_execution",
        {"language": "PYTHON", "code": "print(2**10)"},
    )
    assert (result.tool_use_id, result.is_error, result.content[0].text) == ("ce_1", False, "1024\n")  # type: ignore[union-attr]
    assert isinstance(unnamed, ServerToolUseBlock) and isinstance(failed, ServerToolResultBlock)
    assert failed.tool_use_id == unnamed.id and failed.is_error
    assert failed.provider_data == {"outcome": "OUTCOME_FAILED"}
    ids = ToolIdMap(SESSION)
    replay = to_wire([user("go"), reply], [], options(ids))
    assert replay["contents"][1]["parts"] == CODE_TURN, "ids Gemini gave come back; made-up ones do not"


def test_code_execution_streams_as_whole_blocks_and_equals_the_whole_reply() -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [part]}}], "responseId": "r1"}
        for part in CODE_TURN
    ]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    whole = {
        "candidates": [{"content": {"role": "model", "parts": CODE_TURN}, "finishReason": "STOP"}],
        "responseId": "r1",
    }
    expected = normalized(ADAPTER.from_wire_response(whole, context()))
    for size in (1, 13, 10_000):
        assert normalized(ADAPTER.assemble_stream(chunked(sse(chunks), size), context())) == expected


def test_code_execution_in_a_recorded_model_turn_imports_and_replays() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "2**10?"}]},
            {"role": "model", "parts": CODE_TURN},
            {"role": "user", "parts": [{"text": "thanks"}]},
        ]
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [b.type for b in imported.messages[1].content].count("server_tool_use") == 2
    out = to_wire(imported.messages, imported.tools, imported.options)
    assert out["contents"] == body["contents"]


def test_server_tool_blocks_replay_only_to_their_provider(caplog: pytest.LogCaptureFixture) -> None:
    ids = ToolIdMap(SESSION)
    foreign = assistant(
        [
            {"type": "text", "text": "Searching."},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01",
                "provider": "anthropic",
                "name": "web_search",
                "input": {"query": "ULID spec"},
            },
        ],
        provider="anthropic",
        model="anthropic:claude-sonnet-4-6",
    )
    with caplog.at_level(logging.WARNING, logger="metis"):
        body = to_wire([user("go"), foreign], [], options(ids))
    assert body["contents"][1]["parts"] == [{"text": "Searching."}]
    assert len(_warns(caplog, "server_tool_use")) == 1
    reply = ADAPTER.from_wire_response(
        {"candidates": [{"content": {"role": "model", "parts": CODE_TURN}, "finishReason": "STOP"}]},
        context(ids),
    )
    for provider, model in (("anthropic", "anthropic:claude-sonnet-4-6"), ("openai", "openai:gpt-5")):
        sent = json.dumps(
            metis.adapters.get(provider).to_wire([user("go"), reply], [], options(ids, model=model))
        )
        assert "print(2**10)" not in sent and "1024\\n" not in sent, provider


# --- grounding -----------------------------------------------------------------------------------


def _grounded(parts: list[dict[str, Any]], supports: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    chunks = [
        {"web": {"uri": "https://example.com/a", "title": "a.example"}},
        {"retrievedContext": {"uri": "gs://bucket/b.pdf", "title": "b.pdf"}},
        {"maps": {"title": "no uri"}},
    ]
    metadata = {"groundingChunks": chunks, "groundingSupports": supports, **extra}
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "groundingMetadata": metadata,
            }
        ]
    }


def test_segments_are_utf8_byte_offsets_of_their_part() -> None:
    """ "Café über" is 11 bytes for 9 characters: a segment after it starts at byte 12 = char 10.
    partIndex 0 is the thought part here, so the text part after it is the one meant."""
    text = "Café über alles. Second claim."
    start = len("Café über alles. ".encode())
    reply = ADAPTER.from_wire_response(
        _grounded(
            [{"text": "Thinking.", "thought": True}, {"text": text}],
            [
                {
                    "segment": {
                        "endIndex": len(b"Caf\xc3\xa9 \xc3\xbcber alles."),
                        "text": "Café über alles.",
                    },
                    "groundingChunkIndices": [0],
                },
                {
                    "segment": {"partIndex": 1, "startIndex": start, "endIndex": start + 13},
                    "groundingChunkIndices": [1],
                },
            ],
        ),
        context(),
    )
    block = reply.content[1]
    assert isinstance(block, TextBlock) and block.citations is not None
    first, second = block.citations
    assert isinstance(first, UrlCitation) and isinstance(second, UrlCitation)
    assert (first.start_index, first.end_index, first.url) == (0, 16, "https://example.com/a")
    assert text[first.start_index : first.end_index] == "Café über alles."
    assert text[second.start_index : second.end_index] == "Second claim."  # type: ignore[index]
    assert (second.url, second.title) == ("gs://bucket/b.pdf", "b.pdf")
    assert (reply.metadata.provider_raw or {}).get("groundingMetadata") is None, "all of it became citations"


def test_grounding_that_cannot_be_a_citation_stays_in_provider_raw() -> None:
    supports = [
        {"segment": {"endIndex": 4}, "groundingChunkIndices": [0, 2]},  # chunk 2 has no uri
    ]
    reply = ADAPTER.from_wire_response(
        _grounded([{"text": "Yes."}], supports, webSearchQueries=["q"]), context()
    )
    block = reply.content[0]
    assert isinstance(block, TextBlock) and [c.url for c in block.citations or []] == [
        "https://example.com/a"
    ]
    kept = (reply.metadata.provider_raw or {})["groundingMetadata"]
    assert kept["webSearchQueries"] == ["q"] and kept["groundingSupports"] == supports
    assert len(kept["groundingChunks"]) == 3


def test_grounded_text_replays_to_gemini_as_text() -> None:
    ids = ToolIdMap(SESSION)
    reply = ADAPTER.from_wire_response(
        _grounded([{"text": "Yes."}], [{"segment": {"endIndex": 4}, "groundingChunkIndices": [0]}]),
        context(ids),
    )
    assert ADAPTER.to_wire([user("ok?"), reply], [], options(ids))["contents"][1] == {
        "role": "model",
        "parts": [{"text": "Yes."}],
    }


def test_a_document_block_in_a_tool_result_goes_in_function_response_parts() -> None:
    ids = ToolIdMap(SESSION)
    call = assistant(
        [{"type": "tool_use", "id": "tu_01HZ0000000000000000000001", "name": "fetch", "input": {}}],
        provider="openai",
        model="openai:gpt-5",
    )
    document = DocumentBlock.model_validate(
        {"type": "document", "source": _source("base64", PDF), "media_type": "application/pdf"}
    ).model_dump(exclude_none=True)
    body = to_wire(
        [user("go"), call, tool_result("tu_01HZ0000000000000000000001", "here", extra=[document])],
        [],
        options(ids),
    )
    assert body["contents"][2]["parts"][0]["functionResponse"]["parts"] == [
        {"inlineData": {"mimeType": "application/pdf", "data": PDF}}
    ]


def test_recitation_sources_are_citations_and_a_license_keeps_the_metadata() -> None:
    text = "Ünïcode first. Then a quote."
    sources = [
        {
            "startIndex": len("Ünïcode first. ".encode()),
            "endIndex": len(text.encode()),
            "uri": "https://ex.org/q",
        },
        {"endIndex": 5, "license": "CC-BY-4.0"},  # no uri: stays in provider_raw
    ]
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "citationMetadata": {"citationSources": sources},
            }
        ]
    }
    reply = ADAPTER.from_wire_response(body, context())
    block = reply.content[0]
    assert isinstance(block, TextBlock) and block.citations is not None
    (citation,) = block.citations
    assert isinstance(citation, UrlCitation)
    assert (citation.url, citation.cited_text) == ("https://ex.org/q", "Then a quote.")
    assert (reply.metadata.provider_raw or {})["citationMetadata"] == {"citationSources": sources}
