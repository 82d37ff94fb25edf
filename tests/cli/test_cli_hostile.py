"""Stored content is untrusted (issue 29): what `metis` prints of it cannot drive a terminal,
and what it writes as JSON holds no raw C1 or bidi control either (item 7); a damaged row is
named, not passed over in silence, and does not hide the rest of the store (item 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis.cli import cli
from metis.ids import new_tool_id
from metis.store import Store, open_store

from tests.support.cli_support import run
from tests.support.store_support import (
    BACKENDS,
    conversation,
    message,
    new_target,
    raw_rows,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)

HOSTILE = (
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]0;pwned\x07"  # window title, ended by a bell
    "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write the clipboard
    "\x1b]8;;https://evil.test\x1b\\click me\x1b]8;;\x1b\\"  # a hyperlink
    "\x9b31m\x9d0;title\x9c"  # 8-bit CSI and OSC
    "\x07\x08\x08\x7f\x00"  # bell, backspaces, DEL, NUL
    "secret\rfake"  # a bare CR overwrites what came before
    "\u202eevil\u202c \u2066iso\u2069"  # bidi override and isolate
    "[bold red]markup[/]"  # rich markup: printed as it is
)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a human view may not print raw (tab and newline lay text out)."""
JSON_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What JSON output may not hold raw (newline separates lines and indents)."""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.sqlite3"
    with Store.open(path) as store:
        sid = store.create_session(
            f"/w/{HOSTILE}", session_id="sess_01HOSTILE00000000000000000", title=f"t{HOSTILE}", source=HOSTILE
        ).id
        call = message(
            sid,
            "assistant",
            [
                {"type": "text", "text": f"reply {HOSTILE}"},
                {"type": "tool_use", "id": new_tool_id(), "name": "read_file", "input": {"p": HOSTILE}},
            ],
            tool_call(sid).metadata.model_dump(mode="json", exclude_none=True),
        )
        store.append_many(
            [
                user(sid, f"hello {HOSTILE}"),
                call,
                tool_result(sid, tool_ids_of(call)[0], f"result {HOSTILE}"),
                user(sid, f"second line\n{HOSTILE}\tend"),
            ]
        )
    return path


def _strings(value: object) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def _no_controls(text: str) -> None:
    found = CONTROLS.findall(text)
    assert not found, f"raw control characters printed: {found!r}"


def test_show_and_sessions_print_stored_control_sequences_as_visible_escapes(
    runner: CliRunner, db: Path
) -> None:
    shown = run(runner, "--db", db, "show", "sess_01HOSTILE", "--full", env={"COLUMNS": "100"})
    assert shown.exit_code == 0, shown.output
    _no_controls(shown.stdout)
    for visible in ("\\x1b]52;c;ZXZpbA==\\x07", "\\x9b31m", "secret\\x0dfake", "\\u202eevil", "\\x08\\x08"):
        assert visible in shown.stdout.replace("\n", ""), visible
    assert "[bold red]markup[/]" in shown.stdout
    listed = run(runner, "--db", db, "sessions", env={"COLUMNS": "400"})
    assert listed.exit_code == 0, listed.output
    _no_controls(listed.stdout)
    assert "t\\x1b[2J" in listed.stdout


def test_json_outputs_escape_c1_and_bidi_controls_too(runner: CliRunner, db: Path, tmp_path: Path) -> None:
    shown = run(runner, "--db", db, "show", "sess_01HOSTILE", "--json")
    assert shown.exit_code == 0
    assert not JSON_UNSAFE.findall(shown.stdout)
    assert json.loads(shown.stdout)["title"] == f"t{HOSTILE}"  # the same strings, escaped
    for fmt in ("otel", "jsonl-messages"):
        out = tmp_path / f"{fmt}.jsonl"
        result = run(runner, "--db", db, "export", "sess_01HOSTILE", "--format", fmt, "-o", out)
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert not JSON_UNSAFE.findall(text), fmt
        assert any(HOSTILE in value for line in text.splitlines() for value in _strings(json.loads(line)))


# --- damaged rows (issue 29, item 8) ----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_unreadable_row_does_not_empty_the_list(backend: str, tmp_path: Path) -> None:
    target = new_target(backend, tmp_path)
    with open_store(target) as store:
        sids = [store.create_session("/w", title=f"session {n}").id for n in range(3)]
        for sid in sids:
            store.append_many(conversation(sid, 1))
        damaged = store.load_session(sids[1])[2].id
    broken = "'{not json'" if backend == "sqlite" else '\'{"not": "a list"}\'::jsonb'
    assert raw_rows(target, f"UPDATE messages SET content_json = {broken} WHERE id = ? RETURNING id", damaged)
    result = CliRunner().invoke(cli, ["--db", target, "sessions"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for sid in sids:
        assert sid[:12] in result.stdout
    assert f"stored message {damaged} is unreadable" in result.stderr
    assert "session 1" in result.stdout and " 3 " in result.stdout  # the three rows still readable


def test_an_edited_tool_use_id_is_named_by_show_and_export(tmp_path: Path) -> None:
    db = tmp_path / "edited.sqlite3"
    with Store.open(db) as store:
        sid = store.create_session("/w").id
        store.append_many(conversation(sid, 2))
        _, call, result, _, *_ = store.load_session(sid)
    (old,) = tool_ids_of(call)
    new = new_tool_id()
    edited = call.model_dump_json(include={"content"}, exclude_none=True).replace(old, new)
    content = json.dumps(json.loads(edited)["content"])
    assert raw_rows(
        str(db), "UPDATE messages SET content_json = ? WHERE id = ? RETURNING id", content, call.id
    )
    orphan = f"session {sid}, message {result.id}: answers {old}, which no earlier tool_use made"
    unanswered = f"session {sid}, message {call.id}: tool call {new} (read_file) has no result"
    runs = {
        "show": ["show", sid],
        "show --json": ["show", sid, "--json"],
        "otel": ["export", sid, "--format", "otel", "-o", str(tmp_path / "o.jsonl")],
        "jsonl": ["export", sid, "--format", "jsonl-messages", "-o", str(tmp_path / "j.jsonl")],
    }
    for name, args in runs.items():
        done = CliRunner().invoke(cli, ["--db", str(db), *args])
        assert done.exit_code == 0, (name, done.output)
        assert orphan in done.stderr, (name, done.stderr)
        assert unanswered in done.stderr, (name, done.stderr)
