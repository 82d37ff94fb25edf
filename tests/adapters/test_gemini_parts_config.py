"""Issue 30 item 4: a Gemini request's `generationConfig` and a part's `videoMetadata` are not lost.

`request_video_generation_config.json` follows the Gemini API's video understanding guide
(a YouTube `fileData` clipped with `videoMetadata.startOffset`/`endOffset`, an inline video
with a custom `fps`) and sets generationConfig fields beside the canonical ones (checked
with google-genai's `Content` and `GenerateContentConfig` when written). Imported and sent
back to Gemini it is the request as recorded; sent elsewhere, each part field is one §7.3
record (it has no canonical place, so it is kept for Gemini alone), and the generationConfig
fields without a canonical meaning are reported as Gemini-only options.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from metis import adapters
from metis.ids import ToolIdMap
from metis.settings import request_options

from tests.support import golden
from tests.support.gemini_support import ADAPTER, PROVIDER, SESSION, check_request, normalized, wire

NAME = "request_video_generation_config.json"


def test_part_fields_and_generation_config_replay_to_gemini_as_recorded() -> None:
    recorded = wire(NAME)
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    canonical = normalized([*imported.messages])
    for i, item in enumerate(canonical):  # imported messages get fresh ids and times
        item["id"], item["created_at"] = f"<message {i}>", "<now>"
    golden.check(PROVIDER, golden.expected_name(NAME), {"messages": canonical, "dropped": imported.dropped})
    options = imported.options
    assert (options.max_tokens, options.temperature, options.top_p, options.reasoning_effort) == (
        1024,
        0.7,
        0.95,
        "low",
    )
    body = ADAPTER.to_wire(imported.messages, imported.tools, options)
    check_request(body)
    assert {key: body[key] for key in recorded} == recorded


def test_snake_case_spellings_keep_their_fields_too() -> None:
    recorded = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"inline_data": {"mime_type": "video/mp4", "data": "AAAA"}, "video_metadata": {"fps": 1}},
                    {"text": "What happens?"},
                ],
            }
        ],
        "generation_config": {
            "max_output_tokens": 100,
            "top_k": 4,
            "thinking_config": {"thinking_level": "high"},
        },
    }
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert (imported.options.max_tokens, imported.options.reasoning_effort) == (100, "high")
    body = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    assert body["contents"][0]["parts"][0]["video_metadata"] == {"fps": 1}
    assert body == recorded  # spelled as it was sent (issue 30), the canonical parts written so


def test_sent_elsewhere_each_part_field_and_option_is_one_record(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        imported = ADAPTER.from_wire_request(wire(NAME), session_id=SESSION, tool_ids=ToolIdMap(SESSION))
        options = imported.options
        options.model = "openrouter:google/gemini-2.5-flash"
        body = adapters.get("openrouter").to_wire(imported.messages, imported.tools, options)
    assert "videoMetadata" not in str(body)
    assert body["max_tokens"] == 1024 and body["reasoning"] == {"effort": "low"}
    parts = [r for r in caplog.records if getattr(r, "block_type", None) == "videoMetadata"]
    assert [r.message_id for r in parts] == ["contents[0]", "contents[2]"]  # type: ignore[attr-defined]
    options_dropped = sorted(
        r.reason.split(" ", 1)[0]  # type: ignore[attr-defined]
        for r in caplog.records
        if getattr(r, "block_type", None) == "option"
    )
    assert options_dropped == [
        "generationConfig.candidateCount",
        "generationConfig.frequencyPenalty",
        "generationConfig.mediaResolution",
        "generationConfig.presencePenalty",
        "generationConfig.responseModalities",
        "generationConfig.seed",
        "generationConfig.thinkingConfig.includeThoughts",
        "generationConfig.topK",
    ]


@pytest.mark.parametrize(
    "config",
    [
        {
            "thinkingConfig": {"thinkingBudget": -1, "includeThoughts": True}
        },  # "automatic" (google-genai ThinkingConfig)
        {"maxOutputTokens": 0},
    ],
)
def test_a_count_that_means_something_else_stays_geminis_own(config: dict[str, Any]) -> None:
    """`thinkingBudget: -1` is Gemini's "automatic", no budget: read as one it made the
    request unstorable (RequestOptions says thinking_budget >= 0) and failed every
    conversion to Anthropic. It stays Gemini's own option and replays as sent."""
    recorded = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": config}
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert (imported.options.thinking_budget, imported.options.max_tokens) == (None, None)
    request_options(imported.options, "gemini")  # storable
    assert ADAPTER.to_wire(imported.messages, imported.tools, imported.options)["generationConfig"] == config
    imported.options.model = "anthropic:claude-sonnet-4-6"
    body = adapters.get("anthropic").to_wire(imported.messages, imported.tools, imported.options)
    assert "thinking" not in body


def test_part_fields_stay_on_their_part_when_function_responses_split_the_turn() -> None:
    """A user turn whose media part comes before a functionResponse is imported as two user
    messages around the tool message: the part's fields stay with the message holding that
    part (they once moved to the later message's first block, the text part)."""
    video = {
        "fileData": {"mimeType": "video/mp4", "fileUri": "https://www.youtube.com/watch?v=9hE5-98ZeCg"},
        "videoMetadata": {"startOffset": "10s", "endOffset": "20s"},
    }
    recorded = {
        "model": "gemini-2.5-flash",
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
            },
            {
                "role": "user",
                "parts": [
                    video,
                    {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}},
                    {"text": "And this clip?"},
                ],
            },
        ],
    }
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    body = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    parts = [part for content in body["contents"] for part in content["parts"]]
    assert video in parts
    assert {"text": "And this clip?"} in parts
