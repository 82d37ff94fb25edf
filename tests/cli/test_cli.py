"""`metis` commands through click's CliRunner (and the installed console script once).

Bad input of every kind must end as one red `error:` line and a non-zero exit (2 for
usage, 1 for failures) and never a traceback; the happy paths are checked against the
store and against the provider SDK contracts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from metis.catalog import load_catalog
from metis.cli import cli
from metis.store import Store
from metis_schema.v3 import MessageStatus, Role, RoutingMode

from tests.support.cli_support import ANTHROPIC_BODY, OPENAI_BODY, anthropic_text_stream, imported, run
from tests.support.paths import REPO


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cli.sqlite3"


@pytest.fixture
def files(tmp_path: Path) -> Iterator[dict[str, Path]]:
    paths = {
        "anthropic": tmp_path / "anthropic.json",
        "openai": tmp_path / "openai.json",
        "jsonl": tmp_path / "many.jsonl",
        "broken": tmp_path / "broken.json",
    }
    paths["anthropic"].write_text(json.dumps(ANTHROPIC_BODY))
    paths["openai"].write_text(json.dumps(OPENAI_BODY))
    variants = [
        {
            **OPENAI_BODY,
            "messages": [*OPENAI_BODY["messages"][:-1], {"role": "user", "content": f"Question {i}"}],
        }
        for i in range(4)
    ]
    paths["jsonl"].write_text("\n".join(json.dumps(body) for body in variants) + "\n")
    paths["broken"].write_text('{"model": "gpt-5", "messages": [')
    yield paths


def assert_clean_failure(result: Result, code: int, *needles: str) -> None:
    """One `error:` line on stderr, the exit code, no traceback."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0]


# --- convert ---------------------------------------------------------------------------------------


def test_convert_anthropic_to_openai_reports_drops(runner: CliRunner, files: dict[str, Path]) -> None:
    from tests.support.contracts import openai as openai_contract

    result = run(runner, "convert", "--from", "anthropic", "--to", "openai", files["anthropic"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    openai_contract.check_request(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    call = body["messages"][2]["tool_calls"][0]
    assert body["messages"][3]["tool_call_id"] == call["id"] and json.loads(
        call["function"]["arguments"]
    ) == {"city": "Paris"}
    assert body["messages"][1]["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "dropped thinking block from message #2 (assistant) [openai]" in result.stderr
    assert "Looks like Paris" not in result.stdout  # dropped, never rendered as text


def test_convert_from_stdin_with_a_json_report(runner: CliRunner, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = run(
        runner,
        "convert",
        "--from",
        "anthropic",
        "--to",
        "ollama",
        "--model",
        "llama3.3",
        "--report",
        report,
        "-",
        stdin=json.dumps(ANTHROPIC_BODY),
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == load_catalog().resolve("llama3.3").wire_model
    data = json.loads(report.read_text())
    dropped = {(d["block_type"], d["message_index"]) for d in data["dropped"] if d["block_type"]}
    assert dropped == {("image", 1), ("thinking", 2)}
    assert all(d["reason"] for d in data["dropped"])
    assert data["to"] == "ollama" and data["model"] == "ollama:llama-3.3-70b"


def test_a_body_read_as_the_wrong_provider_is_refused_not_emptied(
    runner: CliRunner, files: dict[str, Path], db: Path
) -> None:
    # read as OpenAI Chat, this Anthropic body would lose every tool call without an error
    result = run(runner, "convert", "--from", "openai", "--to", "anthropic", files["anthropic"])
    assert_clean_failure(result, 2, "does not look like an openai request body", "anthropic")
    result = run(runner, "convert", "--from", "anthropic", "--to", "openai", files["openai"])
    assert_clean_failure(result, 2, "`system` role message")
    result = run(runner, "--db", db, "import", "--from", "gemini", files["openai"])
    assert result.exit_code == 1 and "does not look like a gemini request body" in result.stderr
    # plain text turns fit several formats: accepted as the user says
    plain = files["openai"].with_name("plain.json")
    plain.write_text(json.dumps({"model": "gpt-5", "messages": [{"role": "user", "content": "Hi"}]}))
    assert run(runner, "convert", "--from", "ollama", "--to", "openai", plain).exit_code == 0


def test_convert_round_trip_to_the_same_provider_keeps_ids(runner: CliRunner, files: dict[str, Path]) -> None:
    result = run(
        runner, "convert", "--from", "anthropic", "--to", "anthropic", "--model", "sonnet", files["anthropic"]
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["messages"][1]["content"][0] == ANTHROPIC_BODY["messages"][1]["content"][0]  # signed thinking
    assert body["messages"][1]["content"][1]["id"] == "toolu_01A09q90qw90lq917835lq9"
    assert "nothing dropped" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["--from", "anthropic", "--to", "openai", "{broken}"], 1, "is not JSON"),
        (["--from", "antropic", "--to", "openai", "{anthropic}"], 2, "'antropic' is not one of"),
        (["--from", "anthropic", "--to", "openai", "{missing}"], 1, "No such file"),
        (["--from", "openai", "--to", "anthropic", "{list}"], 1, "must be a JSON object"),
        (["--from", "gemini", "--to", "anthropic", "{openai}"], 2, "gemini"),
        (
            ["--from", "anthropic", "--to", "openai", "--model", "sonnet", "{anthropic}"],
            2,
            "not a openai model",
        ),
        (["--from", "anthropic", "--to", "openai", "--model", "gpt-9000", "{anthropic}"], 1, "unknown model"),
    ],
)
def test_convert_bad_input_is_one_clean_line(
    runner: CliRunner, files: dict[str, Path], tmp_path: Path, args: list[str], code: int, needle: str
) -> None:
    (tmp_path / "list.json").write_text("[1, 2]")
    names = {
        **{k: str(v) for k, v in files.items()},
        "missing": str(tmp_path / "nope.json"),
        "list": str(tmp_path / "list.json"),
    }
    result = run(runner, "convert", *[a.format(**names) for a in args])
    assert_clean_failure(result, code, needle)


# --- import, sessions, show --------------------------------------------------------------------------


def test_import_stores_sessions_and_lists_them(runner: CliRunner, db: Path, files: dict[str, Path]) -> None:
    ids = imported(runner, db, "anthropic", files["anthropic"])
    assert len(ids) == 1
    with Store.open(db) as store:
        messages = store.load_session(ids[0])
        assert [m.role for m in messages] == [
            Role.system,
            Role.user,
            Role.assistant,
            Role.tool,
            Role.assistant,
            Role.user,
        ]
        assert store.load_tool_ids(ids[0]).resolve_incoming("anthropic", "toolu_01A09q90qw90lq917835lq9")
        assert store.get_session(ids[0]).active_model == "anthropic:claude-sonnet-4-6"

    result = run(runner, "--db", db, "sessions", env={"COLUMNS": "100"})
    assert result.exit_code == 0 and ids[0][:12] in result.stdout
    assert "Weather where this was taken?" in result.stdout  # the title: the first user text

    result = run(runner, "--db", db, "show", ids[0][:12])
    assert result.exit_code == 0, result.output
    for needle in (
        "→ get_weather(",
        "← tu_",
        "image image/png",
        "thinking",
        "succeeded",
        "toolu_01A09q90qw90lq917835lq9",
        f"source     {files['anthropic']}",
        "#2 assistant · anthropic:claude-sonnet-4-6 (default) · no usage recorded",
        "totals     6 messages",
    ):
        assert needle in result.stdout


def test_import_json_lines_with_progress(runner: CliRunner, db: Path, files: dict[str, Path]) -> None:
    ids = imported(runner, db, "openai", files["jsonl"], files["openai"])
    assert len(ids) == 5 and len(set(ids)) == 5
    with Store.open(db) as store:
        assert len(store.list_sessions()) == 5
        assert [m.role for m in store.load_session(ids[-1])] == [
            Role.system,
            Role.user,
            Role.assistant,
            Role.user,
        ]


def test_import_keeps_going_past_a_bad_file_and_fails_at_the_end(
    runner: CliRunner, db: Path, files: dict[str, Path], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model": "gpt-5", "messages": [{"role": "wizard", "content": "hi"}]}))
    result = run(runner, "--db", db, "import", "--from", "openai", bad, files["broken"], files["openai"])
    assert result.exit_code == 1
    (imported_id,) = result.stdout.split()
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2 and "bad.json" in errors[0] and "broken.json" in errors[1]
    assert "2 of 3 file(s) failed" in result.stderr and "Traceback" not in result.output
    with Store.open(db) as store:
        assert [info.id for info in store.list_sessions()] == [imported_id]  # nothing half-written


def test_import_fail_fast_stops_at_the_first_bad_file(
    runner: CliRunner, db: Path, files: dict[str, Path]
) -> None:
    result = run(
        runner, "--db", db, "import", "--fail-fast", "--from", "openai", files["broken"], files["openai"]
    )
    assert_clean_failure(result, 1, "broken.json")
    with Store.open(db) as store:
        assert store.list_sessions() == []


def test_import_of_a_recorded_exchange_stores_the_reply_too(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    reply = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    exchange = tmp_path / "exchange.json"
    exchange.write_text(
        json.dumps(
            {
                "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]},
                "response": reply,
            }
        )
    )
    (session,) = imported(runner, db, "openai", exchange)
    with Store.open(db) as store:
        messages = store.load_session(session)
    assert [m.role for m in messages] == [Role.user, Role.assistant]
    usage = messages[-1].metadata.usage
    assert usage is not None and usage.output_tokens == 3 and usage.cost_usd > 0  # gpt-4o is priced now
    assert messages[-1].metadata.model == "openai:gpt-4o"


def test_sessions_and_show_bad_input(runner: CliRunner, db: Path, files: dict[str, Path]) -> None:
    result = run(runner, "--db", db, "sessions")
    assert result.exit_code == 0 and "no sessions yet" in result.stderr
    assert_clean_failure(run(runner, "--db", db, "show", "sess_nope"), 1, "no session 'sess_nope'")
    imported(runner, db, "openai", files["openai"], files["jsonl"])
    assert_clean_failure(run(runner, "--db", db, "show", "sess_"), 1, "matches 5 sessions")
    assert_clean_failure(run(runner, "--db", db, "frobnicate"), 2, "No such command")


# --- replay and price -------------------------------------------------------------------------------------


def test_replay_shows_body_drops_and_verdict(runner: CliRunner, db: Path, files: dict[str, Path]) -> None:
    from tests.support.contracts import openai as openai_contract

    (session,) = imported(runner, db, "anthropic", files["anthropic"])
    result = run(runner, "--db", db, "replay", session, "--to", "openai:gpt-5")
    assert result.exit_code == 0, result.output
    openai_contract.check_request(json.loads(result.stdout))
    assert "dropped thinking block" in result.stderr
    assert "swap check: openai:gpt-5 can carry this session" in result.stderr

    result = run(runner, "--db", db, "replay", session, "--to", "llama3.3")
    assert result.exit_code == 0, result.output
    assert "dropped image block from message #1 (user)" in result.stderr
    assert (
        "refused: Cannot swap to Llama 3.3 70B: session contains images that this model can't process"
        in result.stderr
    )
    assert_clean_failure(
        run(runner, "--db", db, "replay", session, "--to", "nobody:nothing"), 1, "unknown model"
    )


def test_price_reprices_with_an_override_table_beside_the_stored_cost(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    result = run(runner, "demo", "--db", db)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        (info,) = store.list_sessions()
    rates = {"input_per_mtok_usd": "100", "output_per_mtok_usd": "100"}
    mine = tmp_path / "mine.json"
    mine.write_text(
        json.dumps(
            {
                "pricing_version": "mine",
                "models": {"anthropic:claude-sonnet-4-6": rates, "openai:gpt-5": rates},
            }
        )
    )
    result = run(runner, "--db", db, "price", info.id, "--prices", mine, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "vs override mine" in result.stdout and "repriced by override:mine" in result.stdout
    totals = next(line for line in result.stdout.splitlines() if "total" in line)
    stored, repriced = [cell for cell in totals.split() if cell.startswith("$")]
    assert stored != repriced
    with Store.open(db) as store:  # repricing reports beside what was stored, never over it
        usages = [m.metadata.usage for m in store.iter_messages(info.id) if m.metadata.usage]
    assert all(u.pricing_version.startswith("genai-prices@") for u in usages)
    assert_clean_failure(
        run(runner, "--db", db, "price", info.id, "--pricing-version", "1999-01-01"),
        1,
        "unknown pricing version",
    )


# --- validate -------------------------------------------------------------------------------------------


def _message(**overrides: Any) -> dict[str, Any]:
    doc = {
        "id": "01HZ0000000000000000000001",
        "session_id": "sess_42",
        "role": "user",
        "content": [{"type": "text", "text": "What's a ULID?"}],
        "metadata": {},
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 3,
    }
    doc.update(overrides)
    return doc


def test_validate_documents_and_wire_bodies(
    runner: CliRunner, tmp_path: Path, files: dict[str, Path]
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_message()))
    result = run(runner, "validate", good)
    assert result.exit_code == 0 and "valid Message" in result.stdout

    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                _message(),
                _message(
                    role="user",
                    content=[{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
                    created_at="yesterday",
                ),
            ]
        )
    )
    result = run(runner, "validate", bad)
    assert result.exit_code == 1
    assert "invalid MessageList" in result.stdout
    assert "[1].created_at" in result.stdout and "[1].content[0]" in result.stdout

    price = REPO / "runtime" / "metis" / "data" / "pricing-local.json"
    assert "valid PriceTable" in run(runner, "validate", price).stdout

    result = run(runner, "validate", files["anthropic"])
    assert result.exit_code == 0 and "valid anthropic request body" in result.stdout
    result = run(runner, "validate", files["openai"])
    assert result.exit_code == 0 and "valid openai request body" in result.stdout

    broken = tmp_path / "wire.json"
    broken.write_text(
        json.dumps(
            {
                "model": "claude-sonnet-4-6",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}],
            }
        )
    )
    result = run(runner, "validate", "--provider", "anthropic", broken)
    assert result.exit_code == 1 and "messages[0].content" in result.stdout


def test_validate_bad_input(runner: CliRunner, tmp_path: Path, files: dict[str, Path]) -> None:
    assert_clean_failure(run(runner, "validate", files["broken"]), 1, "is not JSON")
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": "world"}')
    assert_clean_failure(
        run(runner, "validate", odd), 1, "not a canonical document or a provider request body"
    )
    assert_clean_failure(run(runner, "validate", "--kind", "Nonsense", odd), 1, "unknown document kind")
    latin = tmp_path / "latin1.json"
    latin.write_bytes('{"text": "caf\xe9"}'.encode("latin-1"))
    assert_clean_failure(run(runner, "validate", latin), 1, "not UTF-8")


# --- chat ---------------------------------------------------------------------------------------------


def openai_text_stream(text: str) -> dict[str, Any]:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> str:
        choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return (
            "data: "
            + json.dumps(
                {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "gpt-5",
                    "choices": choices,
                    "usage": usage,
                }
            )
            + "\n\n"
        )

    return {
        "request": {"path": "/chat/completions", "body_contains": ['"model":"gpt-5"', "Hello there"]},
        "response": {
            "chunks": [
                chunk({"role": "assistant", "content": ""}),
                chunk({"content": text}),
                chunk({}, "stop"),
                chunk({}, usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}),
                "data: [DONE]\n\n",
            ]
        },
    }


def test_chat_one_shot_streams_and_persists(runner: CliRunner, db: Path, tmp_path: Path) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([anthropic_text_stream("Hello there, human.")]))
    result = run(runner, "--db", db, "chat", "sonnet", "Say hello", env={"METIS_REPLAY_FILE": str(replay)})
    assert result.exit_code == 0, result.output
    assert "Hello there, human." in result.stdout and "anthropic:claude-sonnet-4-6" in result.stdout
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        messages = store.load_session(info.id)
    assert [m.role for m in messages] == [Role.user, Role.assistant]
    assert messages[1].metadata.status == MessageStatus.complete and messages[1].metadata.usage is not None


def test_chat_prints_a_model_s_control_characters_inert(runner: CliRunner, db: Path, tmp_path: Path) -> None:
    # The model's words are untrusted: a clear-screen or a clipboard write (OSC 52) in a
    # reply is shown as visible escapes, never sent to the terminal.
    replay = tmp_path / "replay.json"
    hostile = "Hi\x1b[2J there\x1b]52;c;ZXZpbA==\x07 \u202eevil"
    replay.write_text(json.dumps([anthropic_text_stream(hostile)]))
    result = run(runner, "--db", db, "chat", "sonnet", "Say hello", env={"METIS_REPLAY_FILE": str(replay)})
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\u202e" not in result.stdout
    assert "Hi\\x1b[2J there" in result.stdout and "\\u202eevil" in result.stdout


def test_chat_with_a_prompt_answers_once_and_exits_in_a_terminal_too(
    runner: CliRunner, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    from metis.cli import chat as chat_module

    prompted: list[str] = []

    def fake_input(prompt: str = "") -> str:
        prompted.append(prompt)
        return "/quit"

    terminal = types.SimpleNamespace(stdin=types.SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr(chat_module, "sys", terminal)
    monkeypatch.setattr("builtins.input", fake_input)
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([anthropic_text_stream("Hello there, human.")]))
    result = run(runner, "--db", db, "chat", "sonnet", "Say hello", env={"METIS_REPLAY_FILE": str(replay)})
    assert result.exit_code == 0, result.output
    assert "Hello there, human." in result.stdout
    assert prompted == [], "a one-shot question must not wait for more input"


def test_chat_swaps_mid_session_and_prints_refusals(
    runner: CliRunner, db: Path, tmp_path: Path, files: dict[str, Path]
) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([anthropic_text_stream("Hello there."), openai_text_stream("Still here.")]))
    env = {"METIS_REPLAY_FILE": str(replay)}
    script = "hi\n/model\n/model gpt5\nHello there?\n/help\n/quit\nnever sent\n"
    result = run(runner, "--db", db, "chat", "sonnet", stdin=script, env=env)
    assert result.exit_code == 0, result.output
    assert "Hello there." in result.stdout and "Still here." in result.stdout
    assert "active model: anthropic:claude-sonnet-4-6" in result.stdout
    assert "swapped to openai:gpt-5" in result.stdout and "commands: /model" in result.stdout
    with Store.open(db) as store:
        (info,) = store.list_sessions()
        messages = store.load_session(info.id)
        assert info.active_model == "openai:gpt-5"
    assert [m.metadata.provider for m in messages if m.role == Role.assistant] == ["anthropic", "openai"]
    routing = messages[-1].metadata.routing
    assert routing is not None and routing.mode == RoutingMode.manual
    assert "never sent" not in json.dumps([m.model_dump(mode="json") for m in messages])

    # A session holding an image: the swap to a text-only model is refused with the reason.
    (session,) = imported(runner, db, "anthropic", files["anthropic"])
    replay.write_text(json.dumps([]))
    result = run(
        runner, "--db", db, "chat", "sonnet", "--session", session, stdin="/model llama3.3\n/quit\n", env=env
    )
    assert result.exit_code == 0, result.output
    assert (
        "Cannot swap to Llama 3.3 70B: session contains images that this model can't process" in result.stderr
    )


def test_chat_bad_input(runner: CliRunner, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert_clean_failure(run(runner, "--db", db, "chat", "gpt-9000", "hi"), 1, "unknown model")
    assert_clean_failure(
        run(runner, "--db", db, "chat", "sonnet", "hi", env={"ANTHROPIC_API_KEY": ""}), 1, "ANTHROPIC_API_KEY"
    )
    replay = tmp_path / "replay.json"
    replay.write_text(
        json.dumps(
            [
                {
                    "request": {"path": "/v1/messages"},
                    "response": {
                        "status": 401,
                        "json": {
                            "type": "error",
                            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
                        },
                    },
                }
            ]
        )
    )
    result = run(runner, "--db", db, "chat", "sonnet", "hi", env={"METIS_REPLAY_FILE": str(replay)})
    assert_clean_failure(result, 1, "invalid x-api-key")


# --- demo ---------------------------------------------------------------------------------------------


def test_demo_end_to_end(runner: CliRunner, db: Path) -> None:
    result = run(runner, "demo", "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"store: {db}" in out
    assert "swapped to openai:gpt-5" in out
    assert (
        "refused: Cannot swap to Llama 3.3 70B: session contains images that this model can't process" in out
    )
    assert (
        "tool calls" in out
        and "call_Q3v9kX2mZbT7yW1pLr8dN4sA" in out
        and "toolu_01A09q90qw90lq917835lq9" in out
    )

    with Store.open(db) as store:
        (info,) = store.list_sessions()
        messages = store.load_session(info.id)
        records = store.tool_calls(info.id)
        assert info.active_model == "openai:gpt-5"
    replies = [m for m in messages if m.role == Role.assistant]
    assert [m.metadata.provider for m in replies] == ["anthropic"] * 3 + ["openai"] * 2
    assert {m.metadata.status for m in messages} == {MessageStatus.complete}
    assert [m.metadata.routing.mode for m in replies if m.metadata.routing] == [RoutingMode.default] * 3 + [
        RoutingMode.manual
    ] * 2
    costs = [m.metadata.usage.cost_usd for m in replies if m.metadata.usage]
    assert len(costs) == 5 and all(c > 0 for c in costs)
    assert f"${sum(costs)}" in out  # the total row of the table
    assert [(r.provider, r.provider_id, r.status.value) for r in records] == [
        ("anthropic", "toolu_01A09q90qw90lq917835lq9", "succeeded"),
        ("openai", "call_Q3v9kX2mZbT7yW1pLr8dN4sA", "succeeded"),
    ]
    assert any(b.type == "image" for m in messages for b in m.content)


def test_demo_writes_into_the_default_store_that_sessions_reads(runner: CliRunner, tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run(runner, "demo", env={"METIS_HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert f"store: {home / 'metis.sqlite3'}" in result.stdout
    listed = run(runner, "sessions", env={"METIS_HOME": str(home)})
    assert listed.exit_code == 0 and "Summarize README" in listed.stdout


def test_console_script_runs_the_demo_without_network(tmp_path: Path) -> None:
    env = {**os.environ, "METIS_HOME": str(tmp_path), "NO_COLOR": "1"}
    exe = Path(sys.executable).with_name("metis")
    done = subprocess.run(
        [str(exe), "demo"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "refused: Cannot swap to" in done.stdout and "Traceback" not in done.stderr
    failed = subprocess.run(
        [str(exe), "show", "nope"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (
        failed.returncode == 1
        and failed.stderr.strip().startswith("error: ")
        and "Traceback" not in failed.stderr
    )


def test_debug_mode_shows_tracebacks(runner: CliRunner, files: dict[str, Path]) -> None:
    result = runner.invoke(cli, ["validate", str(files["broken"])], env={"METIS_DEBUG": "1"})
    assert (
        result.exit_code == 1
        and result.exception is not None
        and not isinstance(result.exception, SystemExit)
    )


# --- habits: version, --db anywhere, bare metis, start-up imports ----------------------------------------


def test_version_and_bare_metis_prints_help(runner: CliRunner) -> None:
    import metis

    result = run(runner, "--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"metis {metis.__version__}"
    result = run(runner)
    assert result.exit_code == 0 and "Usage: metis" in result.stdout and "Commands:" in result.stdout
    assert result.stderr == ""


def test_db_is_accepted_after_the_subcommand_too(runner: CliRunner, db: Path, files: dict[str, Path]) -> None:
    result = run(runner, "import", "--from", "openai", files["openai"], "--db", db)
    assert result.exit_code == 0, result.output
    (session,) = result.stdout.split()
    assert session[:12] in run(runner, "sessions", "--db", db).stdout
    assert session[:12] in run(runner, "--db", db, "sessions").stdout
    assert run(runner, "show", session[:12], "--db", db).exit_code == 0


def test_a_db_in_a_missing_directory_is_refused_not_created(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "x.sqlite3"
    for args in (["--db", target, "sessions"], ["sessions", "--db", target]):
        assert_clean_failure(run(runner, *args), 2, "does not exist")
    assert not (tmp_path / "nowhere").exists()


def test_help_loads_neither_models_nor_adapters_nor_http() -> None:
    code = (
        "import sys; sys.argv = ['metis', '--help']\n"
        "from metis.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('metis_schema.v3', 'metis.adapters', 'metis.store', 'httpx', 'rich', 'pydantic')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "HEAVY []" in done.stderr, done.stderr


# --- show: 80 columns, --last, --json ----------------------------------------------------------------------


def test_show_fits_80_columns_and_takes_last_and_json(runner: CliRunner, db: Path) -> None:
    assert run(runner, "demo", "--db", db).exit_code == 0
    env = {"COLUMNS": "80"}
    listing = run(runner, "--db", db, "sessions", env=env)
    assert all(len(line) <= 80 for line in listing.stdout.splitlines())
    header = listing.stdout.splitlines()[0].split()
    assert header == ["id", "updated", "model", "title", "msgs", "tokens", "cost"]
    session = listing.stdout.splitlines()[2].split()[0]

    full = run(runner, "--db", db, "show", session, env=env)
    assert full.exit_code == 0 and all(len(line) <= 80 for line in full.stdout.splitlines())
    assert "#0 user" in full.stdout and "#9 assistant" in full.stdout

    last = run(runner, "--db", db, "show", session, "--last", "2", env=env).stdout
    assert "[… 8 earlier messages" in last and "#0 user" not in last and "#8 tool" in last

    data = json.loads(run(runner, "--db", db, "show", session, "--json", "--last", "3").stdout)
    assert data["message_count"] == 10 and len(data["messages"]) == 3
    assert data["title"].startswith("Summarize README.md") and data["id"].startswith(session)
    assert [m["role"] for m in data["messages"]] == ["assistant", "tool", "assistant"]
    assert {c["status"] for c in data["tool_calls"]} == {"succeeded"}


def test_price_as_of_a_date(runner: CliRunner, db: Path) -> None:
    assert run(runner, "demo", "--db", db).exit_code == 0
    with Store.open(db) as store:
        (info,) = store.list_sessions()
    result = run(runner, "--db", db, "price", info.id, "--as-of", "2026-06-01", env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "vs prices of 2026-06-01" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines()[3:] if line.split()[0].isdigit()]
    # genai-prices' prices of that day: gpt-5 at $1.25 in, $0.125 cached, $10 out (the issue's
    # example: the retired local table said $0.006385 for this reply)
    assert len(rows) == 5 and "repriced by genai-prices@" in result.stdout
    assert rows[3][1] == "openai:gpt-5" and rows[3][4] == "$0.0018945"
    assert_clean_failure(run(runner, "--db", db, "price", info.id, "--as-of", "June"), 2, "June")


def test_unpriced_usage_is_shown_as_unpriced_and_warned_about_where_it_is_stored(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    exchange = tmp_path / "ollama.json"
    reply = {"model": "my-local", "message": {"role": "assistant", "content": "hello"}, "done": True}
    reply |= {"done_reason": "stop", "prompt_eval_count": 5, "eval_count": 7}
    request = {"model": "my-local", "messages": [{"role": "user", "content": "hi"}], "stream": False}
    exchange.write_text(json.dumps({"request": request, "response": reply}))
    result = run(runner, "--db", db, "import", "--from", "ollama", exchange)
    assert result.exit_code == 0, result.output
    assert "no price for ollama:my-local; its usage is stored unpriced" in result.stderr
    listing = run(runner, "--db", db, "sessions").stdout
    assert "unpriced" in listing and "$0.0000" not in listing
    shown = run(runner, "--db", db, "show", result.stdout.strip()).stdout
    assert "5 in / 7 out · unpriced" in shown


def test_commands_that_record_nothing_print_no_pricing_warning(runner: CliRunner, tmp_path: Path) -> None:
    body = dict(OPENAI_BODY, model="my-local-model")  # a model no price source knows
    path = tmp_path / "local.json"
    path.write_text(json.dumps(body))
    for args in (["convert", "--from", "openai", "--to", "anthropic", path], ["validate", path]):
        result = run(runner, *args)
        assert result.exit_code == 0, result.output
        assert "price" not in result.stderr, result.stderr


def test_price_under_the_genai_prices_data_and_an_unknown_version(runner: CliRunner, db: Path) -> None:
    from importlib.metadata import version

    assert run(runner, "demo", "--db", db).exit_code == 0
    genai = f"genai-prices@{version('genai-prices')}"
    result = run(runner, "--db", db, "price", "last", "--pricing-version", genai, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    rows = [line.split() for line in result.stdout.splitlines()[3:] if line.split()[0].isdigit()]
    assert len(rows) == 5 and f"repriced by {genai}" in result.stdout  # said once: every row's
    assert_clean_failure(
        run(runner, "--db", db, "price", "last", "--pricing-version", "genai-prices@0.0.0"),
        1,
        "unknown pricing version",
        genai,  # the hint names what is installed
    )
