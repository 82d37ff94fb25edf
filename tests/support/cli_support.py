"""Shared pieces of the CLI tests and of the tests that drive `metis` commands (ops, client
settings): recorded request bodies of two providers, the command runner, `metis import`,
and an Anthropic text stream for `metis chat` replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from metis.cli import cli

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
SIGNATURE = "EqQBCkYIBxgCKkB" + "A" * 220
ANTHROPIC_BODY: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 1024,
    "system": "You are terse.",
    "tools": [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "text", "text": "Weather where this was taken?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Looks like Paris.", "signature": SIGNATURE},
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": "sunny, 21C",
                }
            ],
        },
        {"role": "assistant", "content": "It is sunny in Paris."},
        {"role": "user", "content": "Thanks!"},
    ],
}
OPENAI_BODY: dict[str, Any] = {
    "model": "gpt-5",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Bye"},
    ],
}


def run(
    runner: CliRunner, *args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> Result:
    return runner.invoke(cli, [str(a) for a in args], input=stdin, env=env, catch_exceptions=False)


def imported(runner: CliRunner, db: Path, provider: str, *paths: Path) -> list[str]:
    result = run(runner, "--db", db, "import", "--from", provider, *paths)
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def anthropic_text_stream(text: str, output_tokens: int = 9) -> dict[str, Any]:
    message = {
        "id": "msg_chat",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1},
    }
    half = len(text) // 2
    return {
        "request": {"path": "/v1/messages", "body_contains": ['"stream":true']},
        "response": {
            "chunks": [
                _sse("message_start", {"type": "message_start", "message": message}),
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text[:half]},
                    },
                ),
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text[half:]},
                    },
                ),
                _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                _sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": output_tokens},
                    },
                ),
                _sse("message_stop", {"type": "message_stop"}),
            ]
        },
    }
