"""`metis import` reads recorded traffic as people keep it (issue 27, items 2 and 4).

The recordings under tests/fixtures/recordings/ are built from the providers' own API
reference examples by `build.py` there (a VCR cassette and a HAR file per provider, each
with a JSON reply, a streamed reply, an error reply and a call that is no LLM exchange;
gzip, base64 and chunked bodies; a multi-turn tool conversation; a retry after an error).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from metis.cli import cli
from metis.endpoints import route
from metis.fingerprint import prefix_keys
from metis.store import Store
from metis_schema.v3 import MessageStatus, Role

from tests.support.paths import FIXTURES

RECORDINGS = FIXTURES / "recordings"

EXPECTED: dict[str, tuple[str, str, str]] = {
    # provider -> (model of the JSON reply, model of the stream, text of the stream)
    "anthropic": ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5", "Hello!"),
    "openai": ("openai:gpt-4o", "openai:gpt-4o", "Hello! How can I help?"),
    "responses": ("responses:gpt-5", "responses:gpt-5", "Hi there!"),
    "gemini": (
        "gemini:gemini-2.5-pro",
        "gemini:gemini-2.5-flash-lite",
        "Once upon a time, a backpack held a galaxy.",
    ),
    "ollama": ("ollama:llama3.3", "ollama:llama3.3", "The grass is green."),
    "openrouter": ("openrouter:openai/gpt-4o", "openrouter:openai/gpt-4o", "Start with the foundation."),
    "mistral": ("mistral:mistral-medium-latest", "mistral:mistral-medium-latest", "Comté is a favourite."),
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "import.sqlite3"


def run(runner: CliRunner, db: Path, *args: str | Path) -> Result:
    return runner.invoke(cli, ["--db", str(db), "import", *map(str, args)], catch_exceptions=False)


def report(result: Result, name: str | Path) -> str:
    (line,) = [line for line in result.stderr.splitlines() if line.startswith(f"{name}: ")]
    return line


@pytest.mark.parametrize("provider", sorted(EXPECTED))
@pytest.mark.parametrize("container", ["vcr", "har"])
def test_each_provider_recording_imports_reply_stream_and_error(
    runner: CliRunner, db: Path, provider: str, container: str
) -> None:
    path = RECORDINGS / container / f"{provider}.{'yaml' if container == 'vcr' else 'har'}"
    result = run(runner, db, path)
    assert result.exit_code == 0, result.output
    assert report(result, path).endswith("4 exchange(s): 3 stored, 1 skipped, 0 refused")
    assert "skipped 1: not an LLM call" in result.stderr
    ids = result.stdout.split()
    assert len(ids) == 3
    with Store.open(db) as store:
        replied, streamed, failed = (store.load_session(i) for i in ids)
    reply_model, stream_model, stream_text = EXPECTED[provider]
    for messages, model in ((replied, reply_model), (streamed, stream_model)):
        assert [m.role for m in messages] == [*[m.role for m in messages[:-1]], Role.assistant]
        assert messages[-1].metadata.status == MessageStatus.complete
        assert messages[-1].metadata.model == model
    assert [b.text for b in streamed[-1].content if b.type == "text"] == [stream_text]  # type: ignore[union-attr]
    # the error reply: the request kept, the exchange stored as an error with the provider's words
    assert failed[0].role == Role.user
    assert failed[-1].metadata.status == MessageStatus.error and failed[-1].content == []
    assert "HTTP " in (failed[-1].metadata.provider_raw or {})["error"]["message"]


def test_a_multi_turn_cassette_becomes_one_session(runner: CliRunner, db: Path) -> None:
    path = RECORDINGS / "vcr" / "anthropic_tool_turns.yaml"
    result = run(runner, db, path)
    assert result.exit_code == 0, result.output
    assert report(result, path).endswith("2 exchange(s): 1 stored, 1 appended, 0 refused")
    (session,) = result.stdout.split()
    with Store.open(db) as store:
        messages = store.load_session(session)
        (call,) = store.tool_calls(session)
    assert [m.role for m in messages] == [Role.user, Role.assistant, Role.tool, Role.assistant]
    tool_use = messages[1].content[1]
    assert tool_use.type == "tool_use" and messages[2].content[0].tool_use_id == tool_use.id  # type: ignore[union-attr]
    assert call.provider_id == "toolu_01A09q90qw90lq917835lq9" and call.result_message_id == messages[2].id


def test_a_retry_after_an_error_continues_the_session(runner: CliRunner, db: Path) -> None:
    result = run(runner, db, RECORDINGS / "vcr" / "anthropic_retry.yaml")
    assert result.exit_code == 0, result.output
    (session,) = result.stdout.split()
    with Store.open(db) as store:
        statuses = [(m.role, m.metadata.status) for m in store.load_session(session)]
    assert statuses == [
        (Role.user, MessageStatus.complete),
        (Role.assistant, MessageStatus.error),
        (Role.assistant, MessageStatus.complete),
    ]


def test_the_same_file_twice_adds_nothing(runner: CliRunner, db: Path, tmp_path: Path) -> None:
    path = RECORDINGS / "vcr" / "anthropic_tool_turns.yaml"
    assert run(runner, db, path).exit_code == 0
    copy = tmp_path / "elsewhere.yaml"  # the same traffic under another name is the same too
    shutil.copy(path, copy)
    for again in (path, copy):
        result = run(runner, db, again)
        assert result.exit_code == 0, result.output
        assert result.stdout == ""
        assert report(result, again).endswith("2 exchange(s): 0 stored, 2 duplicate, 0 refused")
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        assert len(store.load_session(info.id)) == 4


def test_a_folder_of_mixed_recordings_imports_in_one_command(runner: CliRunner, db: Path) -> None:
    result = run(runner, db, RECORDINGS)
    assert result.exit_code == 0, result.output
    assert "error:" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if " exchange(s): " in line]
    assert len(lines) == len(list(RECORDINGS.rglob("*.yaml")) + list(RECORDINGS.rglob("*.har"))) + len(
        list((RECORDINGS / "exchanges").glob("*.json"))
    )
    assert all(line.endswith(" 0 refused") for line in lines)
    again = run(runner, db, RECORDINGS)
    assert again.exit_code == 0 and again.stdout == ""
    assert all(" 0 stored" in line for line in again.stderr.splitlines() if " exchange(s): " in line)


def test_an_exchange_with_extra_keys_is_an_exchange(runner: CliRunner, db: Path) -> None:
    path = RECORDINGS / "exchanges" / "with_extra_keys.json"
    assert {"id", "comment", "latency_ms"} <= set(json.loads(path.read_text()))
    result = run(runner, db, path)
    assert result.exit_code == 0, result.output
    assert "Field required" not in result.stderr
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        messages = store.load_session(info.id)
    assert [m.role for m in messages] == [Role.user, Role.assistant]
    assert messages[-1].metadata.usage is not None and messages[-1].metadata.usage.output_tokens == 503


@pytest.mark.parametrize(
    ("name", "roles", "text"),
    [
        ("stream_events.json", [Role.user, Role.assistant], "Hello!"),  # parsed events, no URL
        ("ollama_stream.json", [Role.user, Role.assistant], "The grass is green."),  # NDJSON text
    ],
)
def test_streams_kept_as_events_or_text_are_assembled(
    runner: CliRunner, db: Path, name: str, roles: list[Role], text: str
) -> None:
    result = run(runner, db, RECORDINGS / "exchanges" / name)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        messages = store.load_session(info.id)
    assert [m.role for m in messages] == roles
    assert messages[-1].content[0].text == text  # type: ignore[union-attr]


def test_an_error_reply_keeps_the_request(runner: CliRunner, db: Path) -> None:
    result = run(runner, db, RECORDINGS / "exchanges" / "error_reply.json")
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        user, reply = store.load_session(info.id)
    assert user.content[0].text == "Hello again"  # type: ignore[union-attr]
    error = (reply.metadata.provider_raw or {})["error"]
    assert reply.metadata.status == MessageStatus.error and "HTTP 429" in error["message"]


def test_gemini_model_from_the_reply_the_url_or_model_option(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    reply_only = RECORDINGS / "exchanges" / "gemini_reply_model.json"
    result = run(runner, db, reply_only)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        assert info.active_model == "gemini:gemini-2.0-flash"  # the reply's modelVersion, not the default
    other = tmp_path / "other.sqlite3"
    result = run(runner, other, "--model", "flash-lite", RECORDINGS / "vcr" / "gemini.yaml")
    assert result.exit_code == 0, result.output
    with Store.open(other) as store:
        assert {i.active_model for i in store.list_sessions()} == {"gemini:gemini-2.5-flash-lite"}
    # a body, URL and reply that name no model: the default, with a warning naming the exchange
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"contents": [{"parts": [{"text": "Hi"}]}]}))
    result = run(runner, tmp_path / "third.sqlite3", bare)
    assert result.exit_code == 0, result.output
    assert f"warning: {bare}: no model in the body, URL or reply" in result.stderr


def test_warnings_and_errors_name_their_file(runner: CliRunner, db: Path, tmp_path: Path) -> None:
    result = run(runner, db, RECORDINGS / "exchanges" / "ollama_stream.json")
    assert "no price for ollama:llama3.3; its usage is stored unpriced (" in result.stderr
    assert "ollama_stream.json)" in result.stderr
    ambiguous = tmp_path / "plain.json"
    ambiguous.write_text(json.dumps({"messages": [{"role": "user", "content": "Hi"}]}))
    result = run(runner, db, ambiguous)
    assert result.exit_code == 1
    assert f"error: {ambiguous}: no model in the body, URL or reply. pass --model" in result.stderr
    result = run(runner, db, "--model", "gpt-4o", ambiguous)  # the model tells the provider
    assert result.exit_code == 0, result.output
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "Hi"}], "system": "S"}))
    assert run(runner, db, "--from", "openai", odd).exit_code == 1  # --from against the body's marks
    assert "does not look like an openai request body" in run(runner, db, "--from", "openai", odd).stderr


@pytest.mark.parametrize(
    ("url", "adapter", "model"),
    [
        ("https://api.anthropic.com/v1/messages", "anthropic", None),
        ("https://api.anthropic.com/v1/messages/count_tokens", None, None),
        ("https://api.openai.com/v1/chat/completions", "openai", None),
        ("https://openrouter.ai/api/v1/chat/completions", "openrouter", None),
        ("https://api.mistral.ai/v1/chat/completions", "mistral", None),
        ("http://localhost:11434/v1/chat/completions", "openai", None),  # Ollama speaking OpenAI Chat
        ("http://localhost:11434/api/chat", "ollama", None),
        ("https://api.openai.com/v1/responses", "responses", None),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            "gemini",
            "gemini-2.5-pro",
        ),
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
            "publishers/google/models/gemini-2.5-flash:generateContent",
            "gemini",
            "gemini-2.5-flash",
        ),
        ("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:countTokens", None, None),
        ("https://api.openai.com/v1/embeddings", None, None),
    ],
)
def test_the_endpoint_table_names_the_wire_format_and_model(
    url: str, adapter: str | None, model: str | None
) -> None:
    routed = route(url)
    assert (routed.adapter if routed else None, routed.model if routed else None) == (adapter, model)


def test_a_conversation_fingerprint_ignores_ids_and_times(runner: CliRunner, tmp_path: Path) -> None:
    from metis.canonical import message_hash

    path = RECORDINGS / "vcr" / "anthropic_tool_turns.yaml"
    stored = []
    for name in ("a", "b"):
        db = tmp_path / f"{name}.sqlite3"
        assert run(runner, db, path).exit_code == 0
        with Store.open(db) as store:
            (info,) = store.list_sessions()
            stored.append(store.load_session(info.id))
    first, second = stored
    assert prefix_keys(first) == prefix_keys(second)
    assert message_hash(first[1]) != message_hash(second[1])  # other ids, other tool ids, other times


def test_the_recordings_hold_the_encodings_recorders_keep() -> None:
    import yaml

    cassette = yaml.safe_load((RECORDINGS / "vcr" / "openai.yaml").read_text())
    body = cassette["interactions"][0]["response"]["body"]["string"]
    assert isinstance(body, bytes) and body[:2] == b"\x1f\x8b"  # gzip, as `!!binary`
    chunked = yaml.safe_load((RECORDINGS / "vcr" / "ollama.yaml").read_text())["interactions"][1]["response"]
    assert chunked["headers"]["Transfer-Encoding"] == ["chunked"] and chunked["body"]["string"].endswith(
        "0\r\n\r\n"
    )
    har = json.loads((RECORDINGS / "har" / "anthropic.har").read_text())
    assert har["log"]["entries"][1]["response"]["content"]["encoding"] == "base64"


GEMINI_CHUNKS = [
    {"candidates": [{"content": {"parts": [{"text": "Once upon"}], "role": "model"}, "index": 0}]},
    {
        "candidates": [
            {
                "content": {"parts": [{"text": " a time."}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 4, "totalTokenCount": 8},
        "modelVersion": "gemini-2.5-flash",
    },
]
OLLAMA_CHUNKS = [
    {
        "model": "llama3.3",
        "created_at": "2023-08-04T08:52:19Z",
        "message": {"role": "assistant", "content": "Once upon"},
        "done": False,
    },
    {
        "model": "llama3.3",
        "created_at": "2023-08-04T08:52:20Z",
        "message": {"role": "assistant", "content": " a time."},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 4,
        "eval_count": 4,
    },
]


def _forms(chunks: list[dict[str, object]]) -> dict[str, object]:
    lines = [json.dumps(c) for c in chunks]
    return {
        "events": chunks,
        "sse": "".join(f"data: {line}\n\n" for line in lines),
        "ndjson": "".join(f"{line}\n" for line in lines),
        "array": json.dumps(chunks, indent=2),  # pretty-printed: elements over several lines
    }


@pytest.mark.parametrize("form", ["events", "sse", "ndjson", "array"])
@pytest.mark.parametrize(
    ("adapter", "chunks", "body"),
    [
        ("gemini", GEMINI_CHUNKS, {"contents": [{"role": "user", "parts": [{"text": "A story?"}]}]}),
        (
            "ollama",
            OLLAMA_CHUNKS,
            {"model": "llama3.3", "messages": [{"role": "user", "content": "A story?"}]},
        ),
    ],
)
def test_a_stream_in_any_framing_is_assembled_by_the_adapter(
    adapter: str, chunks: list[dict[str, object]], body: dict[str, object], form: str
) -> None:
    from metis.cli._exchange import parse
    from metis.recordings import Interaction

    reply = _forms(chunks)[form]
    parsed = parse(Interaction(where="t", request=body, response=reply), adapter)
    last = parsed.messages[-1]
    assert last.metadata.status == MessageStatus.complete
    assert [b.text for b in last.content] == ["Once upon a time."]  # type: ignore[union-attr]
    assert last.metadata.usage is not None and last.metadata.usage.output_tokens == 4


def test_a_reply_is_stored_and_priced_at_its_recorded_time(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    # A recording of June 2025 costs what it cost then: the reply's own `created` (OpenAI),
    # else the recording's time (HAR startedDateTime), dates the exchange and its price.
    from datetime import UTC, datetime
    from decimal import Decimal

    from metis.pricing import price_as_of

    openai = {
        "url": "https://api.openai.com/v1/chat/completions",
        "request": {"model": "o3", "messages": [{"role": "user", "content": "Hi"}]},
        "response": {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1748779200,  # 2025-06-01T12:00:00Z, before o3's price cut of 2025-06-10
            "model": "o3-2025-04-16",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000},
        },
    }
    (tmp_path / "openai.json").write_text(json.dumps(openai))
    har = json.loads((RECORDINGS / "har" / "anthropic.har").read_text())
    har["log"]["entries"] = har["log"]["entries"][:1]
    har["log"]["entries"][0]["startedDateTime"] = "2025-03-04T05:06:07.000+01:00"
    (tmp_path / "anthropic.har").write_text(json.dumps(har))
    result = run(runner, db, tmp_path / "openai.json", tmp_path / "anthropic.har")
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        stored = {i.source: store.load_session(i.id) for i in store.list_sessions()}
    (chat,) = [m for s, m in stored.items() if s and "openai.json" in s]
    (claude,) = [m for s, m in stored.items() if s and "anthropic.har" in s]
    june = datetime(2025, 6, 1, 12, tzinfo=UTC)
    assert [m.created_at for m in chat] == [june, june]
    assert [m.created_at for m in claude] == [datetime(2025, 3, 4, 4, 6, 7, tzinfo=UTC)] * 2
    usage = chat[-1].metadata.usage
    assert usage is not None
    then = price_as_of(usage, pricing_key="openai:o3", day=june.date(), model="openai:o3")
    assert then is not None and usage.cost_usd == then.cost_usd == Decimal("0.05")  # $10/$40 per M
