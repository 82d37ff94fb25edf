"""Sessions made by `import`, `chat` and `demo` carry a title and a source in the store's
columns, and `sessions` / `show` read them from there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis.store import Store

from tests.support.cli_support import ANTHROPIC_BODY, OPENAI_BODY, anthropic_text_stream, run


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "labels.sqlite3"


def test_import_records_the_file_and_a_title_in_the_columns(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    body = tmp_path / "recorded.json"
    body.write_text(json.dumps(ANTHROPIC_BODY))
    lines = tmp_path / "many.jsonl"
    lines.write_text("\n".join(json.dumps(OPENAI_BODY) for _ in range(2)) + "\n")
    assert run(runner, "--db", db, "import", "--from", "anthropic", body).exit_code == 0
    result = run(runner, "--db", db, "import", "--from", "openai", lines)
    assert result.exit_code == 0 and "1 stored, 1 duplicate" in result.stderr  # the same body twice
    with Store.open(db) as store:
        infos = {info.source: info for info in store.list_sessions()}
    assert set(infos) == {str(body), f"{lines}:1"}
    anthropic = infos[str(body)]
    assert anthropic.title is not None and anthropic.title.startswith("Weather where this was taken?")
    assert anthropic.routing_policy is not None
    assert "title" not in anthropic.routing_policy and "source" not in anthropic.routing_policy
    assert anthropic.routing_policy["imported_from"] == "anthropic"


def test_sessions_and_show_read_the_title_and_source_columns(runner: CliRunner, db: Path) -> None:
    with Store.open(db) as store:
        store.create_session(
            "/w", session_id="sess_01LABELLED0000000000000000", title="Quarterly report", source="a.json"
        )
    listing = run(runner, "--db", db, "sessions", env={"COLUMNS": "100"}).stdout
    assert "Quarterly report" in listing
    shown = run(runner, "--db", db, "show", "sess_01LABEL").stdout
    assert "title      Quarterly report" in shown and "source     a.json" in shown
    data = json.loads(run(runner, "--db", db, "show", "sess_01LABEL", "--json").stdout)
    assert (data["title"], data["source"]) == ("Quarterly report", "a.json")
    assert (data["parent_session_id"], data["fork_message_id"]) == (None, None)
    assert "forked" not in shown


def test_show_names_the_session_a_fork_came_from(runner: CliRunner, db: Path) -> None:
    with Store.open(db) as store:
        store.create_session("/w", session_id="sess_01PARENT000000000000000000")
        store.create_session(
            "/w",
            session_id="sess_01CHILD0000000000000000000",
            parent_session_id="sess_01PARENT000000000000000000",
            fork_message_id="01HZ0000000000000000000007",
        )
    shown = run(runner, "--db", db, "show", "sess_01CHILD").stdout
    assert "forked     from sess_01PARENT000000000000000000 at message 01HZ0000000000000000000007" in shown
    data = json.loads(run(runner, "--db", db, "show", "sess_01CHILD", "--json").stdout)
    assert data["parent_session_id"] == "sess_01PARENT000000000000000000"
    assert data["fork_message_id"] == "01HZ0000000000000000000007"


def test_chat_records_source_and_titles_the_session_after_the_first_prompt(
    runner: CliRunner, db: Path, tmp_path: Path
) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps([anthropic_text_stream("Hi."), anthropic_text_stream("Again.")]))
    env = {"METIS_REPLAY_FILE": str(replay)}
    prompt = "Say   hello\nto the " + "very " * 30 + "patient reader"
    assert run(runner, "--db", db, "chat", "sonnet", prompt, env=env).exit_code == 0
    with Store.open(db) as store:
        (info,) = store.list_sessions()
    assert info.source == "chat"
    assert info.title is not None and info.title.startswith("Say hello to the very very")
    assert len(info.title) == 78 and info.title.endswith("…")

    again = run(runner, "--db", db, "chat", "sonnet", "Something else", "--session", info.id, env=env)
    assert again.exit_code == 0, again.output
    with Store.open(db) as store:
        assert store.get_session(info.id).title == info.title, "a continued session keeps its title"


def test_demo_records_source_and_title(runner: CliRunner, db: Path) -> None:
    assert run(runner, "demo", "--db", db).exit_code == 0
    with Store.open(db) as store:
        (info,) = store.list_sessions()
    assert (info.source, info.title) == ("demo", "Summarize README.md (use the read_file tool).")
