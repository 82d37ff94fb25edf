"""The README's Python tour runs as written (against recorded-shape provider replies).

Keeps the README true: the example is extracted from README.md and executed with the
HTTP transport replaced by a mock that answers like Anthropic, then like OpenAI.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _tour() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Python API") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README has a Python tour"
    return match.group(1)


def _anthropic(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "output_tokens": 30,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }


def test_readme_python_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "README.md").write_text("# Project Foo\n\nA tool for things.\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    seen: list[dict[str, Any]] = []
    replies = [
        _anthropic(
            [
                {"type": "text", "text": "I'll read it."},
                {
                    "type": "tool_use",
                    "id": "toolu_01abc",
                    "name": "read_file",
                    "input": {"path": "README.md"},
                },
            ],
            "tool_use",
        ),
        _anthropic([{"type": "text", "text": "It describes Project Foo."}], "end_turn"),
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-5",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "The LICENSE is Apache-2.0."},
                }
            ],
            "usage": {"prompt_tokens": 300, "completion_tokens": 12, "total_tokens": 312},
        },
    ]

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"url": str(request.url), "body": json.loads(request.content)})
        return httpx.Response(200, json=replies[len(seen) - 1])

    real_client = httpx.Client
    monkeypatch.setattr(
        "metis.client._sync.httpx.Client",
        lambda **kw: real_client(**{**kw, "transport": httpx.MockTransport(handler)}),
    )
    namespace: dict[str, Any] = {}
    exec(compile(_tour(), "README.md", "exec"), namespace)

    assert [s["url"].split("/")[2] for s in seen] == ["api.anthropic.com"] * 2 + ["api.openai.com"]
    # the tool result went back to Anthropic under Anthropic's own id
    results = [
        b
        for m in seen[1]["body"]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == ["toolu_01abc"]
    # after the swap, OpenAI sees the same call and result, paired by one id
    openai_messages = seen[2]["body"]["messages"]
    call_ids = [c["id"] for m in openai_messages for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in openai_messages if m["role"] == "tool"]
    assert call_ids == answered and len(call_ids) == 1
    reply = namespace["reply"]
    assert reply.metadata.model == "openai:gpt-5"
    assert reply.metadata.routing.mode == "manual"
    assert reply.metadata.usage.cost_usd > 0
