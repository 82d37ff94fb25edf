"""A store file written by metis 0.1.0 (schema v1) reads back through today's metis.

tests/fixtures/store_v1/store.sqlite3 was written once by `make_store.py` at the commit
before schema v2 landed and is never regenerated: its bytes are what a user's store
holds after upgrading. Every message must read back as a message of the schema version
this metis writes (migrated on read when that is newer), with the hash it had when it was
written, and `metis sessions` / `metis show` must list and show all of it.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner
from metis.canonical import message_hash
from metis.cli import cli
from metis.errors import MigrationError
from metis.store import Store
from metis_schema import CURRENT_VERSION

from tests.support.paths import FIXTURES

FIXTURE = FIXTURES / "store_v1"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("metis_store_v1_maker", FIXTURE / "make_store.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "store.sqlite3"  # opening may upgrade the file in place: never the original
    shutil.copyfile(FIXTURE / "store.sqlite3", copy)
    return copy


def test_every_message_reads_back_current_with_its_original_hash(db: Path) -> None:
    written = _maker().sessions()
    with Store.open(db) as store:
        assert sorted(info.id for info in store.list_sessions()) == sorted(written)
        for session_id, originals in written.items():
            loaded = store.load_session(session_id)
            assert [m.id for m in loaded] == [m.id for m in originals]
            assert {m.schema_version for m in loaded} == {CURRENT_VERSION}
            assert [message_hash(m) for m in loaded] == [message_hash(m) for m in originals]


def test_metis_sessions_and_show_read_the_old_file(db: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["--db", str(db), "sessions"], catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    for session_id in ("sess_v1_text", "sess_v1_tools", "sess_v1_thinking", "sess_v1_image"):
        assert session_id[:12] in listed.output  # the 80-column listing shortens ids
    expected = {
        "sess_v1_text": ["A 128-bit sortable id."],
        "sess_v1_tools": ["read_file", "NOTES.md is missing"],
        "sess_v1_thinking": ["thinking", "redacted_thinking"],
        "sess_v1_image": ["image"],
    }
    for session_id, needles in expected.items():
        shown = runner.invoke(cli, ["--db", str(db), "show", session_id], catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        for needle in needles:
            assert needle in shown.output, (session_id, needle, shown.output)


def test_a_row_from_a_newer_metis_fails_only_itself(db: Path) -> None:
    """One row a newer release wrote (a partial deployment) is named by row and version;
    `metis sessions` and `metis show` still list and show everything else."""
    newer = CURRENT_VERSION + 1
    with Store.open(db) as store:
        (victim, *rest) = store.load_session("sess_v1_tools")
        store._conn.execute("UPDATE messages SET schema_version = ? WHERE id = ?", (newer, victim.id))
        with pytest.raises(MigrationError):
            store.load_session("sess_v1_tools")  # continuing a conversation stays strict
        read = store.read_session("sess_v1_tools")
        assert [m.id for m in read.messages] == [m.id for m in rest]
        (error,) = read.newer
        assert (error.row, error.version) == (victim.id, newer)
    runner = CliRunner()
    listed = runner.invoke(cli, ["--db", str(db), "sessions"], catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    for session_id in ("sess_v1_text", "sess_v1_tools", "sess_v1_thinking", "sess_v1_image"):
        assert session_id[:12] in listed.output
    assert victim.id in listed.output and f"v{newer}" in listed.output
    shown = runner.invoke(cli, ["--db", str(db), "show", "sess_v1_tools"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "skipped" in shown.output and victim.id in shown.output and "read_file" in shown.output
