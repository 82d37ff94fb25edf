"""`metis sessions` filters and limits, `metis models` (issue 27, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from metis.catalog import load_catalog
from metis.cli import cli
from metis_schema.v3 import CatalogEntry

from tests.support.paths import FIXTURES

RECORDINGS = FIXTURES / "recordings"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of every recording under tests/fixtures/recordings (24 sessions)."""
    path = tmp_path_factory.mktemp("listing") / "list.sqlite3"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(RECORDINGS)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path


def sessions(db: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--db", str(db), "sessions", *args], env={"COLUMNS": "160"}, catch_exceptions=False
    )


def listed(db: Path, *args: str) -> list[dict[str, object]]:
    result = sessions(db, "--json", *args)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    return rows


def test_limit_lists_the_latest_and_says_how_many_more(db: Path) -> None:
    everything = listed(db, "-n", "0")
    assert len(everything) == 24
    result = sessions(db, "-n", "3")
    rows = [line for line in result.stdout.splitlines()[2:] if line.strip()]
    assert len(rows) == 3 and "21 more session(s) not shown (-n 0 lists all)" in result.stderr
    assert [r["id"] for r in listed(db, "--limit", "3")] == [r["id"] for r in everything[:3]]
    assert len(listed(db)) == 24  # under the default limit of 50


def test_the_table_has_a_model_column(db: Path) -> None:
    lines = sessions(db, "--model", "gemini-2.0-flash").stdout.splitlines()
    assert lines[0].split() == ["id", "updated", "model", "title", "msgs", "tokens", "cost"]
    assert "gemini-2.0-flash" in lines[2] and "What is the speed of light?" in lines[2]


def test_json_rows(db: Path) -> None:
    (row,) = listed(db, "--search", "magic backpack")
    assert row["active_model"] == "gemini:gemini-2.5-flash-lite"
    assert row["title"] == "Write a story about a magic backpack."
    assert row["message_count"] == 2 and row["pricing"] == "priced"
    assert str(row["source"]).endswith(("gemini.har#2", "gemini.yaml#2"))


def test_model_filter_by_alias_id_or_part_of_an_id(db: Path) -> None:
    assert {r["active_model"] for r in listed(db, "--model", "gemini")} == {
        "gemini:gemini-2.5-pro",
        "gemini:gemini-2.5-flash-lite",
        "gemini:gemini-2.0-flash",
    }
    assert {r["active_model"] for r in listed(db, "--model", "flash-lite")} == {
        "gemini:gemini-2.5-flash-lite"
    }
    assert len(listed(db, "--model", "sonnet")) == 5  # every claude-sonnet-4-5 session
    assert listed(db, "--model", "no-such-model") == []
    assert "no sessions match" in sessions(db, "--model", "no-such-model").stderr


def test_search_reads_titles_and_message_text(db: Path) -> None:
    (by_tool_result,) = listed(db, "-s", "15 DEGREES")  # a tool result's text, any case
    assert by_tool_result["title"] == "What's the weather like in San Francisco?"
    (by_reply,) = listed(db, "-s", "claude monet")  # an assistant reply
    assert by_reply["active_model"] == "mistral:mistral-medium-latest"
    assert listed(db, "-s", "hamlet", "--model", "gemini") == []  # filters combine


def test_since(db: Path) -> None:
    assert len(listed(db, "--since", "1h")) == 24
    assert listed(db, "--since", "2999-01-01") == []
    bad = sessions(db, "--since", "yesterday")
    assert bad.exit_code == 2 and "an age like 7d or 12h" in bad.stderr


def test_models_lists_the_catalog_with_aliases_and_capabilities() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["models"], env={"COLUMNS": "200"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    header, _, *rows = result.stdout.splitlines()
    assert header.split() == ["model", "aliases", "context", "output", "can", "carry"]
    assert len(rows) == len(list(load_catalog()))
    flash = next(row for row in rows if row.startswith("gemini:gemini-2.5-flash "))
    assert "gemini-flash, flash" in flash and "1,048,576" in flash and "thinking" in flash
    data = json.loads(runner.invoke(cli, ["models", "--provider", "ollama", "--json"]).stdout)
    entries = [CatalogEntry.model_validate(d) for d in data]
    assert entries and {e.provider for e in entries} == {"ollama"}
