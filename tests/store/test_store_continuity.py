"""Cross-provider continuity (spec §11.1.2): persist a mixed session, reload it elsewhere, go on.

Six turns alternate Anthropic and OpenAI: each turn is a user message, a tool call from
one provider (recorded-shape response bodies, parsed by the adapter's
from_wire_response), the TOOL message answering it, and the follow-up answer from the
other provider, so every tool_result crosses providers. Before each response the history
is built with that provider's to_wire and its tool_results are checked against their
tool_uses in the body, as the provider would. Everything is appended to the store as it
happens. The session is then reloaded in a new process (same conversation hash, same
tool id map) and continued on a third provider: its request body builds and every
tool_result in it resolves to its tool_use.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from metis.assembly import RequestContext
from metis.canonical import conversation_hash
from metis.ids import ToolIdMap
from metis.store import Store
from metis_schema.v3 import Message, ToolDefinition, ToolResultBlock

from tests.support.store_support import stamp, tool_result, user

SID = "sess_continuity"
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
    "openrouter": "openrouter:openai/gpt-5-mini",
}
TOOLS = [
    ToolDefinition(
        name="read_file",
        description="Read a file from the workspace",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        side_effects="read",
    )
]
_n = itertools.count(1)


def adapter(name: str) -> Any:
    import metis.adapters

    return metis.adapters.get(name)


# --- recorded-shape response bodies ----------------------------------------------------------


def anthropic_body(text: str, calls: list[str], *, thinking: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking:
        content.append(
            {"type": "thinking", "thinking": "Which file first?", "signature": "EqQBCkYIBxgCKkA=="}
        )
    content.append({"type": "text", "text": text})
    for path in calls:
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_01{next(_n):022d}",
                "name": "read_file",
                "input": {"path": path},
            }
        )
    return {
        "id": f"msg_01{next(_n):022d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 812,
            "output_tokens": 64,
            "cache_read_input_tokens": 512,
            "cache_creation_input_tokens": 0,
        },
    }


def openai_body(text: str, calls: list[str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{next(_n):024d}",
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
            }
            for path in calls
        ]
    return {
        "id": f"chatcmpl-{next(_n)}",
        "object": "chat.completion",
        "created": 1778241600,
        "model": "gpt-5-2025-08-07",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 901,
            "completion_tokens": 71,
            "total_tokens": 972,
            "prompt_tokens_details": {"cached_tokens": 256},
        },
        "system_fingerprint": "fp_1",
    }


BODIES = {"anthropic": anthropic_body, "openai": openai_body}


# --- does every tool_result in a wire body answer a tool_use before it? ------------------------


def pairs_by_id(body: dict[str, Any], provider: str) -> list[tuple[str, str]]:
    """(tool_use wire id, tool_result wire id) pairs, in body order; raises if one is unmatched."""
    uses: list[str] = []
    results: list[str] = []
    if provider == "anthropic":
        for msg in body["messages"]:
            for block in msg["content"] if isinstance(msg["content"], list) else []:
                if block["type"] == "tool_use":
                    uses.append(block["id"])
                elif block["type"] == "tool_result":
                    assert block["tool_use_id"] in uses, f"unresolved tool_result {block['tool_use_id']}"
                    results.append(block["tool_use_id"])
    else:  # OpenAI chat shape (openai, openrouter)
        for msg in body["messages"]:
            uses += [c["id"] for c in msg.get("tool_calls") or []]
            if msg["role"] == "tool":
                assert msg["tool_call_id"] in uses, f"unresolved tool message {msg['tool_call_id']}"
                results.append(msg["tool_call_id"])
    assert sorted(results) == sorted(uses), "every tool_use is answered exactly once"
    assert len(set(uses)) == len(uses), "wire ids are unique"
    return list(zip(uses, results, strict=True))


def check_by_id(body: dict[str, Any], provider: str, history: list[Message], ids: ToolIdMap) -> None:
    """Each wire tool_result id maps back, through the session map, to its canonical id."""
    pairs = pairs_by_id(body, provider)
    canonical = [b.tool_use_id for m in history for b in m.content if isinstance(b, ToolResultBlock)]
    wire = [result for _, result in pairs]
    assert [ids.resolve_incoming(provider, w) for w in wire] == canonical


def check_positional(body: dict[str, Any], provider: str, history: list[Message]) -> None:
    """Gemini and Ollama pair results with calls by name and order: check that, and the payload."""
    expected = [
        (b.tool_use_id, b.content[0].text)
        for m in history
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    seen: list[str] = []
    pending: list[str] = []
    if provider == "gemini":
        for turn in body["contents"]:
            for part in turn["parts"]:
                if "functionCall" in part:
                    pending.append(part["functionCall"]["name"])
                if "functionResponse" in part:
                    assert pending and pending.pop(0) == part["functionResponse"]["name"]
                    seen.append(json.dumps(part["functionResponse"]["response"]))
    else:
        for msg in body["messages"]:
            pending += [c["function"]["name"] for c in msg.get("tool_calls") or []]
            if msg["role"] == "tool":
                assert pending and pending.pop(0) == msg["tool_name"]
                seen.append(msg["content"])
    assert pending == [], "a tool call went unanswered"
    assert len(seen) == len(expected)
    for payload, (_, text) in zip(seen, expected, strict=True):
        assert text in payload, "results stay in the order of the calls they answer"


def check_body(body: dict[str, Any], provider: str, history: list[Message], ids: ToolIdMap) -> None:
    if provider in ("gemini", "ollama"):
        check_positional(body, provider, history)
    else:
        check_by_id(body, provider, history, ids)


# --- the session -------------------------------------------------------------------------------


def build_request(provider: str, history: list[Message], ids: ToolIdMap) -> dict[str, Any]:
    from metis.adapters import AdapterOptions

    options = AdapterOptions(model=MODELS[provider], session_id=SID, tool_ids=ids, max_tokens=1024)
    body: dict[str, Any] = adapter(provider).to_wire(history, TOOLS, options)
    check_body(body, provider, history, ids)
    return body


def respond(provider: str, body: dict[str, Any], ids: ToolIdMap) -> Message:
    context = RequestContext(
        session_id=SID, model=MODELS[provider], tool_ids=ids, latency_ms=640, created_at=stamp()
    )
    message: Message = adapter(provider).from_wire_response(body, context)
    return message


def run_session(store: Store, turns: int) -> tuple[list[Message], ToolIdMap]:
    ids = ToolIdMap(SID)
    history: list[Message] = []

    def add(message: Message) -> None:
        store.append(message, tool_ids=ids)
        history.append(message)

    for turn in range(turns):
        caller, answerer = ("anthropic", "openai") if turn % 2 == 0 else ("openai", "anthropic")
        paths = [f"doc{turn}.md", f"notes{turn}.md"] if turn == 2 else [f"doc{turn}.md"]
        add(user(SID, f"Turn {turn}: read {' and '.join(paths)}"))
        build_request(caller, history, ids)
        if caller == "anthropic":
            call = respond(caller, anthropic_body("Reading.", paths, thinking=turn == 0), ids)
        else:
            call = respond(caller, openai_body("Reading.", paths), ids)
        add(call)
        for block in call.content:
            if block.type == "tool_use":
                add(tool_result(SID, block.id, f"contents of {block.input['path']} (turn {turn})"))
        build_request(answerer, history, ids)
        add(respond(answerer, BODIES[answerer](f"Turn {turn} done.", []), ids))
    store.save_tool_ids(SID, ids)
    return history, ids


RELOAD = textwrap.dedent(
    """
    import json, sys
    from metis.canonical import conversation_hash
    from metis.store import Store

    with Store.open(sys.argv[1]) as store:
        messages = store.load_session(sys.argv[2])
        print(json.dumps({
            "hash": conversation_hash(messages),
            "count": len(messages),
            "tool_ids": store.load_tool_ids(sys.argv[2]).to_dict(),
            "pending": len(store.unanswered_tool_calls(sys.argv[2])),
        }))
    """
)


@pytest.fixture(scope="module")
def persisted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Message], ToolIdMap]:
    adapter("anthropic")
    adapter("openai")
    path = tmp_path_factory.mktemp("continuity") / "metis.sqlite3"
    with Store.open(path) as store:
        store.create_session("/workspace", session_id=SID, active_model=MODELS["anthropic"])
        history, ids = run_session(store, turns=6)
    return path, history, ids


def test_the_mixed_session_is_what_it_claims(persisted: tuple[Path, list[Message], ToolIdMap]) -> None:
    _, history, ids = persisted
    providers = [m.metadata.provider for m in history if m.role.value == "assistant"]
    assert providers == ["anthropic", "openai", "openai", "anthropic"] * 3
    assert len(history) == 6 * 4 + 1
    wire = {e.provider: e.provider_id for e in ids if e.origin == "provider"}
    assert wire["anthropic"].startswith("toolu_") and wire["openai"].startswith("call_")


def test_reloaded_in_a_new_process_it_hashes_the_same(
    persisted: tuple[Path, list[Message], ToolIdMap],
) -> None:
    path, history, ids = persisted
    done = subprocess.run(
        [sys.executable, "-c", RELOAD, str(path), SID],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["count"] == len(history)
    assert seen["hash"] == conversation_hash(history)
    assert seen["tool_ids"] == ids.to_dict()
    assert seen["pending"] == 0


def test_tool_calls_recorded_the_issuing_provider_and_its_id(
    persisted: tuple[Path, list[Message], ToolIdMap],
) -> None:
    path, _, ids = persisted
    with Store.open(path) as store:
        records = store.tool_calls(SID)
    assert len(records) == 7
    for record in records:
        assert record.status == "succeeded"
        assert record.provider in ("anthropic", "openai")
        assert record.provider_id == ids.provider_id(record.id, record.provider)
        assert record.provider_id.startswith("toolu_" if record.provider == "anthropic" else "call_")


@pytest.mark.parametrize("third", ["gemini", "ollama", "openrouter"])
def test_continued_on_a_third_provider(
    persisted: tuple[Path, list[Message], ToolIdMap], third: str, tmp_path: Path
) -> None:
    original, history, _ = persisted
    path = tmp_path / "copy.sqlite3"
    with Store.open(original) as source:  # each provider continues its own copy
        source._conn.execute("VACUUM INTO ?", (str(path),))
    with Store.open(path) as store:
        messages = store.load_session(SID)
        ids = store.load_tool_ids(SID)
        assert conversation_hash(messages) == conversation_hash(history)
        follow_up = user(SID, "Now summarize everything you read.")
        store.append(follow_up)
        messages.append(follow_up)
        body = build_request(third, messages, ids)
    assert body, f"{third} built a request body"
    results = sum(isinstance(b, ToolResultBlock) for m in messages for b in m.content)
    assert results == 7
