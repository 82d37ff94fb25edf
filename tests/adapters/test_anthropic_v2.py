"""Schema v2 through the Anthropic adapter: citations, documents, search results, server
tools, compaction and cache breakpoints, in both directions.

Golden inputs (tests/golden/anthropic/, sources in `_sources.md` there): the replies and
streams `*_document_citations`, `*_server_tools`, `*_compaction` and `*_citations` run
through tests/adapters/test_anthropic_adapter.py's golden, replay and stream == whole tests; the
recorded request `request_v2_blocks.json` (Anthropic's documentation examples of
documents, search results, web search and citations, and the SDK's compaction type) is
imported and replayed here. The rest pins what goes back to Anthropic and what is a §7.3
drop.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis.ops import compact
from metis_schema.v3 import (
    CompactionBlock,
    DocumentBlock,
    Message,
    SearchResultBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
)

from tests.adapters.test_anthropic_adapter import (
    ADAPTER,
    PROVIDER,
    SESSION,
    WEATHER,
    _equivalent,
    assistant,
    by_index,
    context,
    msg,
    normalized,
    options,
    sse,
    wire,
)
from tests.support import golden
from tests.support.contracts.anthropic import check_request

REQUEST = "request_v2_blocks.json"
PDF_B64 = "JVBERi0xLjQKJcOkw7zDtsOfCg=="
SEARCH_RESULT = {
    "type": "search_result",
    "source": "notes://rome",
    "title": "Rome notes",
    "content": [{"type": "text", "text": "Hotel near Termini."}],
    "citations_enabled": True,
}
SERVER_CALL = {
    "type": "server_tool_use",
    "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
    "provider": "anthropic",
    "name": "web_search",
    "input": {"query": "Rome weather"},
}
SERVER_RESULT = {
    "type": "server_tool_result",
    "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
    "provider": "anthropic",
    "name": "web_search",
    "content": [],
    "provider_data": {
        "type": "web_search_tool_result",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://w.example/r",
                "title": "R",
                "encrypted_content": "Eq",
            }
        ],
    },
}


def _drops(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """(block_type, reason) of every §7.3 WARN the adapter logged about a block (an import's
    field drops carry a `path` and are checked through `WireImport.dropped`)."""
    return [
        (r.block_type, r.reason)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.levelno == logging.WARNING and hasattr(r, "block_type") and not hasattr(r, "path")
    ]


def _body(messages: list[Message], **kw: Any) -> dict[str, Any]:
    body = ADAPTER.to_wire(messages, [], options(**kw))
    check_request(body)
    return body


# --- the recorded request ----------------------------------------------------------------------


def _import(caplog: pytest.LogCaptureFixture | None = None) -> Any:
    if caplog is None:
        return ADAPTER.from_wire_request(wire(REQUEST), session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        return ADAPTER.from_wire_request(wire(REQUEST), session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def test_request_with_v2_blocks_imports_to_golden(caplog: pytest.LogCaptureFixture) -> None:
    imported = _import(caplog)
    view = {
        "messages": [
            {**m.model_dump(mode="json", exclude_none=True), "id": f"#{i}", "created_at": "<import time>"}
            for i, m in enumerate(imported.messages)
        ],
        "tools": [t.model_dump(mode="json") for t in imported.tools],
        "provider_options": imported.options.provider_options,
        "dropped": imported.dropped,
    }
    golden.check(PROVIDER, golden.expected_name(REQUEST), normalized(by_index(view, imported)))
    user, answer, result, summary = imported.messages[1:5]
    assert [type(b).__name__ for b in user.content] == ["DocumentBlock"] * 3 + ["TextBlock"]
    assert [b.type for b in answer.content] == [
        "server_tool_use",
        "server_tool_result",
        "text",
        "text",
        "tool_use",
    ]
    assert answer.content[2].citations[0].type == "url"  # type: ignore[union-attr]
    assert answer.content[4].cache_point is not None
    inner = result.content[0]
    assert isinstance(inner, ToolResultBlock) and inner.cache_point is not None
    assert isinstance(inner.content[0], SearchResultBlock) and inner.content[0].citations_enabled
    assert isinstance(summary.content[0], CompactionBlock) and summary.content[0].provider == PROVIDER
    # strict is canonical; the tool's cache_control is kept for Anthropic (`tool_fields`)
    assert imported.tools[0].strict is True
    # (v3: defer_loading and the server tool are canonical)
    assert imported.dropped == []
    assert imported.tools[0].provider_data == {"anthropic": {"cache_control": {"type": "ephemeral"}}}
    assert imported.tools[0].defer_loading is True and imported.tools[1].kind == "web_search"
    # the custom-content document alone has no canonical form: kept in provider_raw, one WARN
    assert [t for t, _ in _drops(caplog)] == ["document"]


def test_request_with_v2_blocks_replays_as_recorded() -> None:
    """Import, then export to Anthropic: every block back where it was, with its citations
    (a web search citation with its encrypted_index), cache_control, the compaction's
    signature and the custom-content document, and the tools with their cache_control."""
    original = wire(REQUEST)
    imported = _import()
    body = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    check_request(body)
    assert _equivalent(body) == _equivalent(original)


# --- citations out --------------------------------------------------------------------------


def test_url_citations_of_another_provider_are_dropped_with_one_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cited = {
        "type": "text",
        "text": "Paris is sunny.",
        "citations": [
            {"type": "url", "url": "https://w.example/p", "title": "P"},
            {"type": "url", "url": "https://w.example/q"},
        ],
    }
    messages = [msg("user", [{"type": "text", "text": "hi"}], 1), assistant([cited], 2, provider="openai")]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = _body(messages)
    assert body["messages"][1]["content"] == [{"type": "text", "text": "Paris is sunny."}]
    assert [t for t, _ in _drops(caplog)] == ["text/citation:url"]


def test_own_url_citation_without_its_encrypted_index_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    """An Anthropic message whose citation list was edited: the kept index belongs to another url."""
    message = ADAPTER.from_wire_response(wire("response_citations.json"), context())
    text = message.content[2]
    assert isinstance(text, TextBlock) and text.citations
    edited = text.model_copy(
        update={"citations": [text.citations[0].model_copy(update={"url": "https://x.example"})]}
    )
    message = message.model_copy(update={"content": [*message.content[:2], edited]})
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = _body([msg("user", [{"type": "text", "text": "hi"}], 1), message])
    assert "citations" not in body["messages"][1]["content"][2]
    assert [t for t, _ in _drops(caplog)] == ["text/citation:url"]


def test_document_citations_go_back_from_any_provider() -> None:
    """A char/page/content-block/search-result citation points into the request's own
    documents: it needs nothing opaque, so it is sent whoever wrote it."""
    cite = {
        "type": "char_location",
        "cited_text": "The grass is green.",
        "document_index": 0,
        "start_char_index": 0,
        "end_char_index": 19,
    }
    messages = [
        msg("user", [{"type": "text", "text": "hi"}], 1),
        assistant([{"type": "text", "text": "Green.", "citations": [cite]}], 2, provider="openai"),
    ]
    body = _body(messages)
    assert body["messages"][1]["content"][0]["citations"] == [{**cite, "document_title": None}]


def test_a_citation_type_added_later_is_left_out_with_one_warn(caplog: pytest.LogCaptureFixture) -> None:
    reply = {
        "content": [
            {
                "type": "text",
                "text": "See the map.",
                "citations": [{"type": "map_location", "cited_text": "x", "lat": 1}],
            }
        ],
        "stop_reason": "end_turn",
    }
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        message = ADAPTER.from_wire_response(reply, context())
    assert message.content == [TextBlock(type="text", text="See the map.")]
    assert [t for t, _ in _drops(caplog)] == ["citation 'map_location'"]


# --- server tools and compaction out -------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        {**SERVER_CALL, "provider": "openai"},
        {**SERVER_RESULT, "provider": "openai"},
        {"type": "compaction", "provider": "openai", "data": "gAAAAABoZ2V0"},
        {**SERVER_RESULT, "provider_data": None},
    ],
    ids=["call-of-openai", "result-of-openai", "compaction-of-openai", "result-without-provider-data"],
)
def test_server_blocks_go_back_to_anthropic_only(
    block: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    block = {k: v for k, v in block.items() if v is not None}
    messages = [
        msg("user", [{"type": "text", "text": "hi"}], 1),
        assistant([{"type": "text", "text": "ok"}, block], 2),
    ]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = _body(messages)
    assert body["messages"][1]["content"] == [{"type": "text", "text": "ok"}]
    assert [t for t, _ in _drops(caplog)] == [block["type"]]


def test_anthropic_server_blocks_and_compaction_go_back_whole() -> None:
    compaction = {"type": "compaction", "provider": "anthropic", "summary": "Earlier: Rome.", "data": "Eo4C"}
    messages = [
        msg("user", [{"type": "text", "text": "hi"}], 1),
        assistant([SERVER_CALL, SERVER_RESULT, {"type": "text", "text": "ok"}], 2),
        msg("user", [{"type": "text", "text": "more"}], 3),
        assistant([compaction, {"type": "text", "text": "go on"}], 4),
    ]
    body = _body(messages)
    assert body["messages"][1]["content"][:2] == [
        {k: v for k, v in SERVER_CALL.items() if k != "provider"},
        {**SERVER_RESULT["provider_data"], "tool_use_id": SERVER_RESULT["tool_use_id"]},  # type: ignore[dict-item]
    ]
    assert body["messages"][3]["content"][0] == {
        "type": "compaction",
        "content": "Earlier: Rome.",
        "encrypted_content": "Eo4C",
    }


def test_metis_compaction_still_reaches_anthropic_as_a_summary_turn(caplog: pytest.LogCaptureFixture) -> None:
    """ops.compact's own block (provider "metis", data {"through": id}) is projected into a
    USER text turn before any adapter sees it; a metis block that reached the adapter would
    be a clean drop, never sent as Anthropic compaction."""
    first = msg("user", [{"type": "text", "text": "Plan Rome."}], 1)
    answer = assistant([{"type": "text", "text": "Done."}], 2)
    summary = compact.compaction_message(
        assistant([{"type": "text", "text": "Rome is planned."}], 3), answer.id
    )
    later = msg("user", [{"type": "text", "text": "And Paris?"}], 4)
    projected = compact.project([first, answer, summary, later])
    body = _body(projected)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": f"{compact.SUMMARY_HEADING}\n\nRome is planned."}],
        },
        {"role": "user", "content": [{"type": "text", "text": "And Paris?"}]},
    ]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        raw = _body([first, summary, later])
    assert all(b["type"] != "compaction" for turn in raw["messages"] for b in turn["content"])
    assert [t for t, _ in _drops(caplog)] == ["compaction"]


def test_streamed_compaction_keeps_its_signature_for_replay() -> None:
    """The start block's keys with no canonical field (signature) go back with it."""
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "claude-sonnet-4-6", "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": None, "signature": "EpYBsig"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": "Earlier."},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    data = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events)
    message = ADAPTER.assemble_stream([data], context())
    assert message.content == [CompactionBlock(type="compaction", provider="anthropic", summary="Earlier.")]
    body = _body([msg("user", [{"type": "text", "text": "hi"}], 1), message])
    assert body["messages"][1]["content"] == [
        {"type": "compaction", "content": "Earlier.", "signature": "EpYBsig"}
    ]


def test_a_failed_compaction_with_nothing_to_carry_stays_foreign(caplog: pytest.LogCaptureFixture) -> None:
    reply = {"content": [{"type": "compaction", "content": None}, {"type": "text", "text": "Hi."}]}
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        message = ADAPTER.from_wire_response(reply, context())
    assert [b.type for b in message.content] == ["text"]
    assert [t for t, _ in _drops(caplog)] == ["compaction"]
    body = _body([msg("user", [{"type": "text", "text": "hi"}], 1), message])
    assert body["messages"][1]["content"] == reply["content"]  # replayed as it came


# --- documents and search results out ---------------------------------------------------------


def _document(source: dict[str, Any], media_type: str, **fields: Any) -> dict[str, Any]:
    return {"type": "document", "source": source, "media_type": media_type, **fields}


TEXT_B64 = base64.b64encode(b"Trip notes: Rome").decode()


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            _document(
                {"kind": "base64", "data": PDF_B64}, "application/pdf", title="Guide", citations_enabled=True
            ),
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64},
                "title": "Guide",
                "citations": {"enabled": True},
            },
        ),
        (
            _document({"kind": "base64", "data": TEXT_B64}, "text/plain", context="notes"),
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "Trip notes: Rome"},
                "context": "notes",
            },
        ),
        (
            _document({"kind": "url", "data": "https://example.test/a.pdf"}, "application/pdf"),
            {"type": "document", "source": {"type": "url", "url": "https://example.test/a.pdf"}},
        ),
        (
            _document({"kind": "file_id", "data": "file_011", "provider": "anthropic"}, "application/pdf"),
            {"type": "document", "source": {"type": "file", "file_id": "file_011"}},
        ),
    ],
    ids=["pdf", "plain-text", "pdf-url", "anthropic-file"],
)
def test_documents_go_out_in_anthropic_form(document: dict[str, Any], expected: dict[str, Any]) -> None:
    body = _body([msg("user", [{"type": "text", "text": "Read."}, document], 1)])
    assert body["messages"][0]["content"][1] == expected
    back = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    if document["source"]["kind"] == "file_id":  # a Files API document's media type is not on the wire
        document = {**document, "media_type": "application/octet-stream"}
    assert back.messages[0].content[1] == DocumentBlock.model_validate(document)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (
            _document({"kind": "file_id", "data": "file-abc", "provider": "openai"}, "application/pdf"),
            "file id",
        ),
        (_document({"kind": "base64", "data": PDF_B64}, "text/csv"), "text/csv"),
        (_document({"kind": "url", "data": "https://example.test/a.txt"}, "text/plain"), "only PDFs"),
        (
            _document({"kind": "base64", "data": base64.b64encode(b"\xff\xfe").decode()}, "text/plain"),
            "UTF-8",
        ),
    ],
    ids=["openai-file", "csv", "text-url", "not-utf8"],
)
def test_documents_anthropic_cannot_read_are_dropped(
    document: dict[str, Any], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = _body([msg("user", [{"type": "text", "text": "Read."}, document], 1)])
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Read."}]
    [(block_type, why)] = _drops(caplog)
    assert block_type == "document" and reason in why


def test_a_workspace_document_is_read_inline(workspace: Path) -> None:
    (workspace / "guide.pdf").write_bytes(base64.b64decode(PDF_B64))
    document = _document({"kind": "file_ref", "data": "guide.pdf"}, "application/pdf")
    body = _body([msg("user", [{"type": "text", "text": "Read."}, document], 1)], workspace=workspace)
    assert body["messages"][0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": PDF_B64,
    }


def test_documents_and_search_results_go_inside_tool_results() -> None:
    ids = ToolIdMap(SESSION)
    call = assistant(
        [{"type": "tool_use", "id": "tu_01HZ0000000000000000000001", "name": "get_weather", "input": {}}], 2
    )
    pdf = _document({"kind": "base64", "data": PDF_B64}, "application/pdf")
    result = msg(
        "tool",
        [
            {
                "type": "tool_result",
                "tool_use_id": "tu_01HZ0000000000000000000001",
                "content": [pdf, SEARCH_RESULT],
            }
        ],
        3,
        parent_tool_use_id="tu_01HZ0000000000000000000001",
    )
    body = ADAPTER.to_wire(
        [msg("user", [{"type": "text", "text": "hi"}], 1), call, result], [WEATHER], options(ids)
    )
    check_request(body)
    inner = body["messages"][2]["content"][0]["content"]
    assert [b["type"] for b in inner] == ["document", "search_result"]
    assert inner[1] == {
        "type": "search_result",
        "source": "notes://rome",
        "title": "Rome notes",
        "content": [{"type": "text", "text": "Hotel near Termini."}],
        "citations": {"enabled": True},
    }


# --- cache breakpoints ------------------------------------------------------------------------------


CACHED = {"cache_point": {"ttl": "1h"}}


def test_cache_point_is_cache_control_on_every_kind_both_ways(caplog: pytest.LogCaptureFixture) -> None:
    """Each block kind Anthropic takes `cache_control` on carries the breakpoint out, and
    the import of that body gives the breakpoint back; thinking takes none (one WARN)."""
    tool_id = "tu_01HZ0000000000000000000001"
    pdf = _document({"kind": "base64", "data": PDF_B64}, "application/pdf", **CACHED)
    image = {
        "type": "image",
        "source": {"kind": "url", "data": "https://example.test/a.png"},
        "media_type": "image/png",
        **CACHED,
    }
    messages = [
        msg("system", [{"type": "text", "text": "Be brief.", **CACHED}], 0),
        msg(
            "user", [{"type": "text", "text": "Read.", **CACHED}, image, pdf, {**SEARCH_RESULT, **CACHED}], 1
        ),
        assistant(
            [
                {"type": "thinking", "text": "hm", "signature": "EqQB", **CACHED},
                {**SERVER_CALL, **CACHED},
                {**SERVER_RESULT, **CACHED},
                {"type": "compaction", "provider": "anthropic", "summary": "Earlier.", **CACHED},
                {"type": "tool_use", "id": tool_id, "name": "get_weather", "input": {}, **CACHED},
            ],
            2,
        ),
        msg(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": [{"type": "text", "text": "sunny", **CACHED}],
                    **CACHED,
                }
            ],
            3,
            parent_tool_use_id=tool_id,
        ),
    ]
    ids = ToolIdMap(SESSION)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(messages, [WEATHER], options(ids))
    check_request(body)
    control = {"type": "ephemeral", "ttl": "1h"}
    wire_blocks = [
        *body["system"],
        *body["messages"][0]["content"],
        *body["messages"][1]["content"],
        body["messages"][2]["content"][0],
        *body["messages"][2]["content"][0]["content"],
    ]
    marked = [b["type"] for b in wire_blocks if b.get("cache_control") == control]
    assert marked == [
        "text",
        "text",
        "image",
        "document",
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
        "compaction",
        "tool_use",
        "tool_result",
        "text",
    ]
    assert "cache_control" not in body["messages"][1]["content"][0]  # the thinking block
    assert _drops(caplog) == [("thinking/cache_point", "Anthropic takes no cache_control on thinking blocks")]
    back = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    points = [
        b.cache_point.ttl.value if b.cache_point and b.cache_point.ttl else None
        for m in back.messages
        for b in (*m.content, *(m.content[0].content if isinstance(m.content[0], ToolResultBlock) else ()))
    ]
    assert points == ["1h"] * 5 + [None] + ["1h"] * 6  # the thinking block has none


# --- tools and options --------------------------------------------------------------------------------


def test_strict_tools_are_written_strict() -> None:
    strict = ToolDefinition.model_validate({**WEATHER.model_dump(), "name": "strict_weather", "strict": True})
    body = ADAPTER.to_wire([msg("user", [{"type": "text", "text": "hi"}], 1)], [WEATHER, strict], options())
    check_request(body)
    assert ["strict" in t for t in body["tools"]] == [False, True]
    assert body["tools"][1]["strict"] is True


def test_a_thinking_budget_of_zero_leaves_thinking_out() -> None:
    body = _body([msg("user", [{"type": "text", "text": "hi"}], 1)], thinking_budget=0)
    assert "thinking" not in body
    assert body["max_tokens"] > 0


# --- streams ---------------------------------------------------------------------------------------


def test_streamed_citations_arrive_as_one_whole_block() -> None:
    """The text deltas stream live; at the block's stop the whole text block with its
    citations replaces them (the assembler's block event)."""
    events = list(ADAPTER.stream_response([sse("stream_document_citations.sse")], context()))
    blocks = [e for e in events if e.type == "block"]
    assert [e.index for e in blocks] == [1, 3, 5]  # the cited text blocks only
    assert all(isinstance(e.block, TextBlock) and e.block.citations for e in blocks)  # type: ignore[attr-defined]


def test_streamed_server_tool_input_arrives_with_the_call() -> None:
    events = list(ADAPTER.stream_response([sse("stream_server_tools.sse")], context()))
    calls = [e.block for e in events if e.type == "block" and isinstance(e.block, ServerToolUseBlock)]  # type: ignore[attr-defined]
    assert [c.input for c in calls][:2] == [
        {"url": "https://example.com/article"},
        {"command": "ls -la | head -5"},
    ]
    results = [e.block for e in events if e.type == "block" and isinstance(e.block, ServerToolResultBlock)]  # type: ignore[attr-defined]
    assert [r.is_error for r in results] == [False, False, False, True]


def test_an_mcp_error_given_as_a_string_reads_as_a_failed_result() -> None:
    reply = {
        "content": [
            {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "echo", "server_name": "ex", "input": {}},
            {
                "type": "mcp_tool_result",
                "tool_use_id": "mcptoolu_1",
                "is_error": True,
                "content": "server down",
            },
        ]
    }
    message = ADAPTER.from_wire_response(reply, context())
    call, result = message.content
    assert isinstance(call, ServerToolUseBlock) and call.name == "echo"
    assert isinstance(result, ServerToolResultBlock) and result.is_error and result.name == "mcp"
    assert result.content == [TextBlock(type="text", text="server down")]
    body = _body([msg("user", [{"type": "text", "text": "hi"}], 1), message])
    assert body["messages"][1]["content"] == reply["content"]  # back as the MCP connector's blocks


def test_a_text_document_that_is_not_unicode_is_a_typed_error() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "\ud800"},
                    }
                ],
            }
        ],
    }
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert caught.value.path == "messages[0].content[0].source.data"
