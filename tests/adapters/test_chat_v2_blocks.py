"""Schema v2 through Chat Completions, per dialect row (issue 15 items 6, 7, 11 and the v2 blocks).

What each dialect carries is data in its facts row (`ProviderFacts`); these tests hold each row to
what its provider documents (sources in the rows' comments):

| block / field                 | openai                  | openrouter                | mistral |
|-------------------------------|-------------------------|---------------------------|---------|
| document (PDF) in USER        | `file`, base64/file_id  | `file`, base64 or URL     | dropped |
| audio in USER                 | `input_audio` wav, mp3  | `input_audio` wav, mp3    | dropped |
| video in USER                 | dropped                 | `video_url`, URL or data  | dropped |
| image inside a tool result    | dropped                 | `image_url` part          | dropped |
| url annotations in replies    | citations               | citations                 | -       |
| citations in history          | not sent, no WARN       | not sent, no WARN         | -       |
| plain reasoning text          | replayed (its own key)  | replayed as `reasoning`   | -       |

Every drop is one §7.3 WARN with its five fields; each body that goes out passes the
provider's SDK contract.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from metis import adapters
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    AudioBlock,
    DocumentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    VideoBlock,
)

from tests.support import golden
from tests.support.contracts import mistral as mistral_contract
from tests.support.contracts import openai as openai_contract
from tests.support.contracts import openrouter as openrouter_contract
from tests.support.openai_chat_support import (
    SESSION,
    assistant,
    context,
    msg,
    options,
    text,
    tid,
    tool_result,
    ulid,
)

PDF = "JVBERi0xLjQK"
WAV = "UklGRgAAAABXQVZF"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
MODELS = {
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
    "mistral": "mistral:mistral-medium-latest",
}
AUDIO_MODELS = {"openai": "openai:gpt-4o-audio-preview", "openrouter": "openrouter:google/gemini-2.5-flash"}
"""Models the catalog says take audio (the OpenRouter one video too): the defaults take neither."""
CONTRACTS = {"openai": openai_contract, "openrouter": openrouter_contract, "mistral": mistral_contract}
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")


def _to_wire(provider: str, messages: list[Message], model: str | None = None) -> dict[str, Any]:
    body = adapters.get(provider).to_wire(
        messages, [], options(model or MODELS[provider], ToolIdMap(SESSION))
    )
    CONTRACTS[provider].check_request(body)
    return body


def _lossy(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.WARNING and r.name.startswith("metis.adapters")]


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: getattr(record, k) for k in FIVE}


def _document(source: MediaSource, media_type: str = "application/pdf", **kw: Any) -> DocumentBlock:
    return DocumentBlock(type="document", source=source, media_type=media_type, **kw)


def _user(*blocks: Any) -> Message:
    return msg(1, Role.user, [text("Read this."), *blocks])


# --- documents --------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "openrouter"])
def test_a_pdf_goes_as_a_file_part(provider: str) -> None:
    block = _document(MediaSource(kind=MediaSourceKind.base64, data=PDF), title="ULID spec")
    body = _to_wire(provider, [_user(block)])
    assert body["messages"][0]["content"][1] == {
        "type": "file",
        "file": {"filename": "ULID spec", "file_data": f"data:application/pdf;base64,{PDF}"},
    }


def test_a_pdf_by_url_goes_to_openrouter_and_is_dropped_for_openai(caplog: pytest.LogCaptureFixture) -> None:
    block = _document(MediaSource(kind=MediaSourceKind.url, data="https://example.com/spec.pdf"))
    routed = _to_wire("openrouter", [_user(block)])
    assert routed["messages"][0]["content"][1]["file"] == {
        "filename": "document",
        "file_data": "https://example.com/spec.pdf",
    }
    user = _user(block)
    with caplog.at_level(logging.WARNING):
        body = _to_wire("openai", [user])
    assert body["messages"][0]["content"] == "Read this."
    [record] = _lossy(caplog)
    assert _fields(record) == {
        "session_id": SESSION,
        "message_id": user.id,
        "block_type": "document",
        "adapter": "openai",
        "reason": "openai file parts take the bytes, not a URL",
    }


def test_a_file_id_goes_only_to_the_provider_that_hosts_it(caplog: pytest.LogCaptureFixture) -> None:
    own = _document(MediaSource(kind=MediaSourceKind.file_id, data="file-abc123", provider="openai"))
    assert _to_wire("openai", [_user(own)])["messages"][0]["content"][1] == {
        "type": "file",
        "file": {"file_id": "file-abc123"},
    }
    other = _document(MediaSource(kind=MediaSourceKind.file_id, data="file_011CNha8", provider="anthropic"))
    with caplog.at_level(logging.WARNING):
        body = _to_wire("openai", [_user(other)])
    assert "file_011CNha8" not in str(body)
    assert [r.block_type for r in _lossy(caplog)] == ["document"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("provider", ["openai", "openrouter", "mistral"])
def test_a_non_pdf_document_is_dropped_with_one_warn(provider: str, caplog: pytest.LogCaptureFixture) -> None:
    block = _document(MediaSource(kind=MediaSourceKind.base64, data="aGVsbG8="), media_type="text/plain")
    with caplog.at_level(logging.WARNING):
        body = _to_wire(provider, [_user(block)])
    assert body["messages"][0]["content"] == "Read this."
    assert [(r.block_type, r.adapter) for r in _lossy(caplog)] == [("document", provider)]  # type: ignore[attr-defined]


def test_a_document_context_is_said_lost_and_the_document_still_goes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    block = _document(
        MediaSource(kind=MediaSourceKind.base64, data=PDF), context="The team's copy.", citations_enabled=True
    )
    user = _user(block)
    with caplog.at_level(logging.WARNING):
        body = _to_wire("openai", [user])
    assert body["messages"][0]["content"][1]["type"] == "file"
    [record] = _lossy(caplog)
    assert _fields(record) == {
        "session_id": SESSION,
        "message_id": user.id,
        "block_type": "document",
        "adapter": "openai",
        "reason": "a file part has no context or citations_enabled",
    }


def test_a_workspace_document_is_read_from_the_workspace(tmp_path: Any) -> None:
    (tmp_path / "spec.pdf").write_bytes(b"%PDF-1.4\n")
    block = _document(MediaSource(kind=MediaSourceKind.file_ref, data="spec.pdf"), title="spec.pdf")
    body = adapters.get("openai").to_wire(
        [_user(block)], [], options(MODELS["openai"], ToolIdMap(SESSION), workspace=tmp_path)
    )
    assert body["messages"][0]["content"][1]["file"]["file_data"] == f"data:application/pdf;base64,{PDF}"


# --- audio ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "media_type", "wire_format"),
    [
        ("openai", "audio/wav", "wav"),
        ("openai", "audio/mpeg", "mp3"),
        ("openrouter", "audio/wav", "wav"),
        ("openrouter", "audio/mpeg", "mp3"),
    ],
)
def test_audio_goes_as_input_audio(provider: str, media_type: str, wire_format: str) -> None:
    block = AudioBlock(
        type="audio", source=MediaSource(kind=MediaSourceKind.base64, data=WAV), media_type=media_type
    )
    body = _to_wire(provider, [_user(block)], AUDIO_MODELS[provider])
    assert body["messages"][0]["content"][1] == {
        "type": "input_audio",
        "input_audio": {"data": WAV, "format": wire_format},
    }


@pytest.mark.parametrize(
    ("provider", "block"),
    [
        (
            "openai",
            AudioBlock(
                type="audio",
                source=MediaSource(kind=MediaSourceKind.base64, data=WAV),
                media_type="audio/flac",
            ),
        ),
        (
            "openrouter",
            AudioBlock(
                type="audio",
                source=MediaSource(kind=MediaSourceKind.url, data="https://example.com/a.wav"),
                media_type="audio/wav",
            ),
        ),
        (
            "mistral",
            AudioBlock(
                type="audio",
                source=MediaSource(kind=MediaSourceKind.base64, data=WAV),
                media_type="audio/wav",
            ),
        ),
    ],
)
def test_audio_a_dialect_cannot_take_is_dropped(
    provider: str, block: AudioBlock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        body = _to_wire(provider, [_user(block)])
    assert body["messages"][0]["content"] == "Read this."
    assert [(r.block_type, r.adapter) for r in _lossy(caplog)] == [("audio", provider)]  # type: ignore[attr-defined]


# --- video -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "url"),
    [
        (
            MediaSource(kind=MediaSourceKind.url, data="https://example.com/clip.mp4"),
            "https://example.com/clip.mp4",
        ),
        (MediaSource(kind=MediaSourceKind.base64, data="AAAAIGZ0eXA="), "data:video/mp4;base64,AAAAIGZ0eXA="),
    ],
)
def test_openrouter_takes_video_as_a_video_url_part(source: MediaSource, url: str) -> None:
    video = VideoBlock(type="video", source=source, media_type="video/mp4")
    body = _to_wire("openrouter", [_user(video)], AUDIO_MODELS["openrouter"])
    assert body["messages"][0]["content"][1] == {"type": "video_url", "video_url": {"url": url}}


@pytest.mark.parametrize("provider", ["openai", "mistral"])
def test_video_is_dropped_by_the_other_dialects(provider: str, caplog: pytest.LogCaptureFixture) -> None:
    block = VideoBlock(
        type="video",
        source=MediaSource(kind=MediaSourceKind.url, data="https://e.com/c.mp4"),
        media_type="video/mp4",
    )
    with caplog.at_level(logging.WARNING):
        body = _to_wire(provider, [_user(block)])
    assert body["messages"][0]["content"] == "Read this."
    assert [(r.block_type, r.adapter) for r in _lossy(caplog)] == [("video", provider)]  # type: ignore[attr-defined]


# --- images inside tool results (item 6) ------------------------------------------------


def _tool_turns(provider: str) -> list[Message]:
    call = ToolUseBlock(type="tool_use", id=tid(7), name="screenshot", input={})
    image = ImageBlock(
        type="image", source=MediaSource(kind=MediaSourceKind.base64, data=PNG), media_type="image/png"
    )
    return [
        msg(1, Role.user, [text("Take a screenshot.")]),
        assistant(2, [call], model=MODELS[provider]),
        tool_result(3, tid(7), [text("captured"), image]),
    ]


def test_openrouter_carries_images_in_tool_results() -> None:
    body = _to_wire("openrouter", _tool_turns("openrouter"))
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "captured"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]


@pytest.mark.parametrize("provider", ["openai", "mistral"])
def test_images_in_tool_results_are_dropped_where_the_dialect_refuses_them(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    turns = _tool_turns(provider)
    with caplog.at_level(logging.WARNING):
        body = _to_wire(provider, turns)
    assert body["messages"][2]["content"] == "captured"
    [record] = _lossy(caplog)
    assert _fields(record) == {
        "session_id": SESSION,
        "message_id": turns[2].id,
        "block_type": "image",
        "adapter": provider,
        "reason": f"{provider} tool messages carry text only",
    }


def test_openrouter_tool_images_and_user_media_import_and_replay_as_sent() -> None:
    """A recorded request with file, input_audio and tool-image parts comes back the same
    (to a model that takes documents, audio and video: the catalog says Gemini does)."""
    adapter = adapters.get("openrouter")
    body = {
        "model": "google/gemini-2.5-flash",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Compare the two."},
                    {
                        "type": "file",
                        "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF}"},
                    },
                    {"type": "file", "file": {"filename": "b.pdf", "file_data": "https://example.com/b.pdf"}},
                    {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                    {"type": "video_url", "video_url": {"url": "https://example.com/clip.webm"}},
                    {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAAIGZ0eXA="}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "toolu_01A",
                        "type": "function",
                        "function": {"name": "screenshot", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "toolu_01A",
                "content": [
                    {"type": "text", "text": "captured"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
        ],
    }
    ids = ToolIdMap(SESSION)
    imported = adapter.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    assert imported.dropped == []
    assert [b.type for b in imported.messages[0].content] == [
        "text",
        "document",
        "document",
        "audio",
        "video",
        "video",
    ]
    assert [b.media_type for b in imported.messages[0].content[4:]] == ["video/webm", "video/mp4"]  # type: ignore[union-attr]
    replay = adapter.to_wire(imported.messages, imported.tools, imported.options)
    openrouter_contract.check_request(replay)
    assert replay["messages"] == body["messages"]


# --- citations (item 7) -----------------------------------------------------------------


def test_citations_are_not_sent_back_and_not_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    reply = adapters.get("openrouter").from_wire_response(
        _web_search_reply(), context("openrouter:openai/gpt-5-mini")
    )
    first = reply.content[0]
    assert isinstance(first, TextBlock) and first.citations
    with caplog.at_level(logging.WARNING):
        body = _to_wire("openrouter", [msg(1, Role.user, [text("What is OpenRouter?")]), reply])
    assert body["messages"][1] == {"role": "assistant", "content": first.text}
    assert _lossy(caplog) == []


def test_imported_annotations_are_listed_as_dropped() -> None:
    answer = _web_search_reply()["choices"][0]["message"]
    body = {
        "model": "openai/gpt-5-mini",
        "messages": [{"role": "user", "content": "What is OpenRouter?"}, {**answer, "reasoning": None}],
    }
    imported = adapters.get("openrouter").from_wire_request(
        body, session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    assert [d["path"] for d in imported.dropped] == ["messages[1].annotations"]
    block = imported.messages[1].content[0]
    assert isinstance(block, TextBlock) and block.citations is None


def test_an_annotation_of_another_type_is_kept_raw_with_a_warn(caplog: pytest.LogCaptureFixture) -> None:
    reply = _web_search_reply()
    other = {"type": "file", "file": {"hash": "abc", "name": "a.pdf"}}
    reply["choices"][0]["message"]["annotations"].append(other)
    with caplog.at_level(logging.WARNING):
        message = adapters.get("openrouter").from_wire_response(
            reply, context("openrouter:openai/gpt-5-mini")
        )
    assert message.metadata.provider_raw is not None
    assert message.metadata.provider_raw["annotations"] == [other]
    [record] = _lossy(caplog)
    assert _fields(record)["block_type"] == "annotation" and record.message_id == message.id  # type: ignore[attr-defined]


def test_a_citation_the_schema_refuses_is_a_wire_format_error() -> None:
    from metis.errors import WireFormatError

    reply = _web_search_reply()
    reply["choices"][0]["message"]["annotations"][0]["url_citation"]["start_index"] = -1
    with pytest.raises(WireFormatError) as caught:
        adapters.get("openrouter").from_wire_response(reply, context("openrouter:openai/gpt-5-mini"))
    assert caught.value.path == "choices[0].message.annotations"


def _web_search_reply() -> dict[str, Any]:
    import json

    path = golden.folder("openrouter") / "response_web_search.json"
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


# --- plain reasoning text (item 11) -----------------------------------------------------


def _reasoning_reply(key: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-r1",
        "object": "chat.completion",
        "model": model.split(":", 1)[1],
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "",
                    key: "The user wants the weather; call the tool.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }


@pytest.mark.parametrize(
    ("provider", "key", "model"),
    [
        ("openai", "reasoning_content", "openai:qwen3-8b"),  # vLLM, llama.cpp, DeepSeek
        ("openai", "reasoning", "openai:qwen3-8b"),  # Ollama /v1
        ("openrouter", "reasoning", "openrouter:anthropic/claude-sonnet-4.6"),  # no reasoning_details
    ],
)
def test_plain_reasoning_goes_back_under_its_own_key_to_the_same_model(
    provider: str, key: str, model: str
) -> None:
    ids = ToolIdMap(SESSION)
    adapter = adapters.get(provider)
    reply = adapter.from_wire_response(_reasoning_reply(key, model), context(model, ids))
    assert isinstance(reply.content[0], ThinkingBlock)
    history = [msg(1, Role.user, [text("Weather in Paris?")]), reply]
    body = adapter.to_wire(history, [], options(model, ids))
    sent = body["messages"][1]
    assert sent[key] == "The user wants the weather; call the tool."
    assert set(sent) == {"role", "content", "tool_calls", key}


def test_streamed_plain_reasoning_goes_back_as_a_whole_reply_does() -> None:
    """vLLM / DeepSeek stream `reasoning_content` deltas: the assembled reply replays them."""
    model = "openai:qwen3-8b"
    deltas = [
        {"role": "assistant", "reasoning_content": "The user wants "},
        {"reasoning_content": "the weather."},
        {"content": "Calling the tool."},
    ]
    chunks = [f'data: {{"id":"c","choices":[{{"index":0,"delta":{_json(d)}}}]}}\n\n' for d in deltas]
    chunks += [
        'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        "data: [DONE]\n\n",
    ]
    ids = ToolIdMap(SESSION)
    reply = adapters.get("openai").assemble_stream(chunks, context(model, ids))
    body = adapters.get("openai").to_wire(
        [msg(1, Role.user, [text("Weather?")]), reply], [], options(model, ids)
    )
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "Calling the tool.",
        "reasoning_content": "The user wants the weather.",
    }


def test_openai_streamed_annotations_end_as_one_cited_text_block() -> None:
    """OpenAI's search models stream the citations in a delta (openai-python ChoiceDelta
    extra `annotations`); the assembled reply holds them on its text."""
    cite = {"url": "https://example.com/a", "title": "A", "start_index": 0, "end_index": 5}
    deltas = [
        {"role": "assistant", "content": "Hello"},
        {"content": " world"},
        {"annotations": [{"type": "url_citation", "url_citation": cite}]},
    ]
    chunks = [f'data: {{"id":"c","choices":[{{"index":0,"delta":{_json(d)}}}]}}\n\n' for d in deltas]
    chunks += [
        'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        "data: [DONE]\n\n",
    ]
    reply = adapters.get("openai").assemble_stream(chunks, context(MODELS["openai"]))
    [block] = reply.content
    assert isinstance(block, TextBlock) and block.text == "Hello world"
    assert block.citations is not None
    assert [c.model_dump(exclude_none=True) for c in block.citations] == [{"type": "url", **cite}]


def test_plain_reasoning_is_dropped_for_another_model_and_another_provider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = ToolIdMap(SESSION)
    reply = adapters.get("openai").from_wire_response(
        _reasoning_reply("reasoning_content", "openai:qwen3-8b"), context("openai:qwen3-8b", ids)
    )
    history = [msg(1, Role.user, [text("Weather in Paris?")]), reply]
    with caplog.at_level(logging.WARNING):
        body = adapters.get("openai").to_wire(history, [], options("openai:gpt-4.1", ids))
        routed = adapters.get("openrouter").to_wire(history, [], options(MODELS["openrouter"], ids))
    openai_contract.check_request(body)
    openrouter_contract.check_request(routed)
    assert "reasoning_content" not in body["messages"][1]
    assert "reasoning" not in routed["messages"][1] and "reasoning_content" not in routed["messages"][1]
    assert [(r.block_type, r.adapter, r.message_id) for r in _lossy(caplog)] == [  # type: ignore[attr-defined]
        ("thinking", "openai", reply.id),
        ("thinking", "openrouter", reply.id),
    ]


# --- Anthropic tool_choice {"type": "any"} (item 14) ------------------------------------


@pytest.mark.parametrize(
    ("provider", "expected"), [("openai", "required"), ("openrouter", "required"), ("mistral", "any")]
)
def test_convert_maps_anthropic_any_tool_choice_by_meaning(provider: str, expected: str) -> None:
    """`metis convert --from anthropic`: "any" means some tool must be called, never a tool named "any"."""
    import json

    from click.testing import CliRunner
    from metis.cli import cli

    recorded = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 256,
        "tool_choice": {"type": "any"},
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    result = CliRunner().invoke(
        cli,
        ["convert", "--from", "anthropic", "--to", provider, "--model", MODELS[provider], "-"],
        input=json.dumps(recorded),
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["tool_choice"] == expected
    CONTRACTS[provider].check_request(body)


# --- every WARN in adapters/chat carries the five §7.3 fields (item 12) -----------------


def _reply(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def _reply_part() -> None:
    body = _reply(
        {"role": "assistant", "content": [{"type": "text", "text": "Hi"}, {"type": "audio", "id": "a1"}]}
    )
    adapters.get("openai").from_wire_response(body, context(MODELS["openai"]))


def _reply_detail() -> None:
    details = [{"type": "reasoning.unknown", "index": 0}]
    body = _reply({"role": "assistant", "content": "Hi", "reasoning_details": details})
    adapters.get("openrouter").from_wire_response(body, context(MODELS["openrouter"]))


def _reply_custom_call() -> None:
    call = {"id": "call_1", "type": "custom", "custom": {"name": "grep", "input": "x"}}
    adapters.get("openai").from_wire_response(
        _reply({"role": "assistant", "content": "Hi", "tool_calls": [call]}), context(MODELS["openai"])
    )


def _stream_nameless_call() -> None:
    delta = {"tool_calls": [{"index": 0, "id": "call_1", "function": {"arguments": "{}"}}]}
    chunks = [
        f'data: {{"id":"c","choices":[{{"index":0,"delta":{_json(delta)}}}]}}\n\n',
        'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n',
        "data: [DONE]\n\n",
    ]
    list(adapters.get("openai").stream_response(chunks, context(MODELS["openai"])))


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _cache_points_for_openai() -> None:
    opts = options(MODELS["openai"], ToolIdMap(SESSION), extra={"metis": {"cache_breakpoints": ["tools"]}})
    adapters.get("openai").to_wire([msg(1, Role.user, [text("Hi")])], [], opts)


def _cache_point_naming_nothing() -> None:
    opts = options(
        MODELS["openrouter"], ToolIdMap(SESSION), extra={"metis": {"cache_breakpoints": [tid(99)]}}
    )
    adapters.get("openrouter").to_wire([msg(1, Role.user, [text("Hi")])], [], opts)


def _thinking_budget_for_openai() -> None:
    opts = options(MODELS["openai"], ToolIdMap(SESSION), thinking_budget=1024)
    adapters.get("openai").to_wire([msg(1, Role.user, [text("Hi")])], [], opts)


def _mixed_system_roles() -> None:
    body = {
        "model": "gpt-4.1",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "Hi"},
        ],
    }
    adapters.get("openai").from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def _import_drop() -> None:
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi", "name": "ada"}]}
    adapters.get("openai").from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


REPLY = ulid(999)  # openai_chat_support.context's message id
WARN_SITES: dict[str, tuple[Any, str, str]] = {
    "reply part with no canonical form": (_reply_part, REPLY, "audio"),
    "reasoning_details item with no canonical form": (_reply_detail, REPLY, "reasoning_details"),
    "tool call of another type": (_reply_custom_call, REPLY, "tool_call"),
    "streamed call without a name": (_stream_nameless_call, REPLY, "tool_use"),
    "cache points where the API caches itself": (_cache_points_for_openai, "request", "cache_breakpoint"),
    "cache point naming nothing": (_cache_point_naming_nothing, tid(99), "cache_breakpoint"),
    "thinking budget without a field": (_thinking_budget_for_openai, "request", "option"),
    "mixed system roles": (_mixed_system_roles, "request", "system_role"),
    "import field with no canonical place": (_import_drop, "messages[0]", "name"),
}


@pytest.mark.parametrize("site", list(WARN_SITES))
def test_each_chat_warn_carries_the_five_fields(site: str, caplog: pytest.LogCaptureFixture) -> None:
    run, message_id, block_type = WARN_SITES[site]
    with caplog.at_level(logging.WARNING):
        run()
    records = _lossy(caplog)
    assert all(all(hasattr(r, k) for k in FIVE) for r in records), [r.getMessage() for r in records]
    [record] = [r for r in records if r.block_type == block_type]  # type: ignore[attr-defined]
    assert (record.session_id, record.message_id) == (SESSION, message_id)  # type: ignore[attr-defined]
    assert record.adapter in MODELS and record.reason  # type: ignore[attr-defined]
