"""Rows from other schema versions (spec §10.3, §11.1.4): migrated on read, tolerated, or refused.

The §11.1.4 case runs codegen over tests/fixtures/schema_v2 (v1 plus an `audio` block, and
metadata `team_id` renamed `org_id`) into a temporary tree, fills in the v1 -> v2 step,
and opens a file written by this (v1) store with the reader a v2 metis would have:
migrate through the chain, then validate as the generated v2 Message. Every row must
come back as a valid v2 model.
"""

from __future__ import annotations

import importlib.util
import logging
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
from metis.errors import MigrationError
from metis.migrations import migrate_document
from metis.store import Store
from metis.store._codec import encode
from metis_schema import CURRENT_VERSION

from tests.support.paths import REPO
from tests.support.store_support import conversation, every_shape, message, user

FIXTURE = REPO / "tests" / "fixtures" / "schema_v2"
SID = "sess_compat"

STEP = '''\
"""v1 -> v2 of the test fixture: metadata.team_id is now metadata.org_id."""

from __future__ import annotations

from typing import Any

from metis.migrations.steps import rename_metadata_field

FROM_VERSION = 1
TO_VERSION = 2


def migrate(document: dict[str, Any]) -> dict[str, Any]:
    return rename_metadata_field(document, "team_id", "org_id")
'''


@dataclass(frozen=True)
class V2:
    package: str
    models: ModuleType


@pytest.fixture(scope="module")
def v2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[V2]:
    if not (FIXTURE / "v2" / "message.json").is_file():
        pytest.skip("tests/fixtures/schema_v2 is not there yet")
    root = tmp_path_factory.mktemp("store_v2")
    tag = uuid.uuid4().hex[:12]
    package = f"metis_store_v2_steps_{tag}"
    gen, steps = root / "gen", root / package
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "--python-only",  # the fixture needs its Python models only; no Node needed
            "--schema-dir",
            str(FIXTURE),
            "--out-dir",
            str(gen),
            "--migrations-dir",
            str(steps),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stub = steps / "v1_to_v2.py"
    assert "NotImplementedError" in stub.read_text(encoding="utf-8"), "codegen made the stub to fill in"
    stub.write_text(STEP, encoding="utf-8")
    name = f"metis_store_v2_models_{tag}"
    spec = importlib.util.spec_from_file_location(name, gen / "metis_schema" / "v2" / "models.py")
    assert spec is not None and spec.loader is not None
    models = importlib.util.module_from_spec(spec)
    sys.modules[name] = models  # SchemaModel finds its bundle through sys.modules[...].__file__
    spec.loader.exec_module(models)
    sys.path.insert(0, str(root))
    try:
        yield V2(package, models)
    finally:
        sys.path.remove(str(root))
        for mod in (name, package, f"{package}.v1_to_v2"):
            sys.modules.pop(mod, None)


def v2_reader(v2: V2) -> Any:
    """What metis.canonical.read_message is once codegen makes v2 current."""

    def read(doc: dict[str, Any]) -> Any:
        return v2.models.Message.model_validate(migrate_document(doc, 2, package=v2.package))

    return read


def test_rows_written_as_v1_read_back_as_valid_v2_models(tmp_path: Path, v2: V2) -> None:
    path = tmp_path / "m.sqlite3"
    team = message(SID, "user", [{"type": "text", "text": "hi"}], {"user_id": "usr_7", "team_id": "team_19"})
    written = [*every_shape(SID), team, *conversation(SID, 2)]
    with Store.open(path) as store:
        store.create_session("/w", session_id=SID)
        store.append_many(written)
        # These messages use only what v1 has: stored as v1 rows, as the last v1 release wrote them.
        store._conn.execute("UPDATE messages SET schema_version = 1")

    with Store.open(path, reader=v2_reader(v2)) as store:
        loaded = store.load_session(SID)

    assert [m.id for m in loaded] == [m.id for m in written]
    for old, new in zip(written, loaded, strict=True):
        assert isinstance(new, v2.models.Message), "no v1 model slips through the fast path"
        assert new.schema_version == 2
        v2.models.Message.model_validate(new.model_dump(mode="json"))  # a valid v2 document
        old_doc = old.model_dump(mode="json", exclude_none=True)
        new_doc = new.model_dump(mode="json", exclude_none=True)
        old_meta, new_meta = old_doc.pop("metadata"), new_doc.pop("metadata")
        assert new_meta.get("org_id") == old_meta.pop("team_id", None)
        new_meta.pop("org_id", None)
        assert new_meta == old_meta
        assert {**new_doc, "schema_version": old_doc["schema_version"]} == old_doc
    assert {m.id: m for m in loaded}[team.id].metadata.org_id == "team_19"

    with sqlite3.connect(path) as conn:  # reading migrated nothing on disk
        assert conn.execute("SELECT DISTINCT schema_version FROM messages").fetchall() == [(1,)]


def test_a_v2_row_with_an_audio_block_reads_under_v2(tmp_path: Path, v2: V2) -> None:
    path = tmp_path / "m.sqlite3"
    audio = {
        "type": "audio",
        "source": {"kind": "base64", "data": "UklGRgAAAABXQVZF"},
        "media_type": "audio/wav",
    }
    with Store.open(path) as store:
        store.create_session("/w", session_id=SID)
        row = list(encode(user(SID)))
        row[3] = orjson.dumps([audio]).decode()
        row[4] = orjson.dumps({"status": "complete", "org_id": "org_1"}).decode()
        row[6] = 2
        store._conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    with Store.open(path, reader=v2_reader(v2)) as store:
        (read,) = store.load_session(SID)
    assert read.content[0].type == "audio" and read.metadata.org_id == "org_1"


def test_v1_reader_tolerates_what_newer_writers_add(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "m.sqlite3"
    kept = user(SID, "before")
    with Store.open(path) as store:
        store.create_session("/w", session_id=SID)
        store.append(kept)
        row = list(encode(message(SID, "user", [{"type": "text", "text": "listen"}])))
        row[3] = (
            row[3][:-1]
            + ',{"type":"hologram","source":{"kind":"base64","data":"UklG"},"media_type":"x/holo"}]'
        )
        row[4] = row[4][:-1] + ',"org_id":"org_1"}'
        store._conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", row)
    with caplog.at_level(logging.WARNING, logger="metis.compat"), Store.open(path) as store:
        first, second = store.load_session(SID)
    assert first == kept
    assert [b.type for b in second.content] == ["text"]
    assert "org_id" not in second.metadata.model_dump()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, "one WARN per message, naming everything skipped"
    assert "hologram" in warnings[0].getMessage() and "org_id" in warnings[0].getMessage()


def test_a_row_from_a_newer_schema_is_refused_with_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with Store.open(path) as store:
        store.create_session("/w", session_id=SID)
        row = list(encode(user(SID)))
        row[6] = CURRENT_VERSION + 1
        store._conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        newer = f"written in schema v{CURRENT_VERSION + 1}; this metis reads up to v{CURRENT_VERSION}"
        with pytest.raises(MigrationError, match=newer):
            store.load_session(SID)


# --- messages of an earlier schema version handed to the store (issue 29, item 13) ------------------


def _as_v1(messages: list[Any]) -> list[Any]:
    """The messages as code written against schema v1 builds them: `metis_schema.v1` models."""
    from metis_schema import v1

    return [
        v1.Message.model_validate({**m.model_dump(mode="json", exclude_none=True), "schema_version": 1})
        for m in messages
    ]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_v1_message_is_migrated_on_write(backend: str, tmp_path: Path) -> None:
    from metis.canonical import message_hash
    from metis.store import open_store
    from metis.store._types import ToolCallStatus
    from metis_schema.v3 import Message

    from tests.support.store_support import new_target, tool_call, tool_ids_of, tool_result

    with open_store(new_target(backend, tmp_path)) as store:
        sid = store.create_session("/w").id
        call = tool_call(sid)
        v2_messages = [user(sid), call, tool_result(sid, tool_ids_of(call)[0])]
        first, *rest = _as_v1(v2_messages)
        store.append(first)
        store.append_many(rest)
        loaded = store.load_session(sid)
        assert all(type(m) is Message and m.schema_version == CURRENT_VERSION for m in loaded)
        assert [message_hash(m) for m in loaded] == [message_hash(m) for m in v2_messages]
        assert [r.status for r in store.tool_calls(sid)] == [ToolCallStatus.succeeded]


def test_what_cannot_be_stored_is_a_typed_error_saying_why() -> None:
    from metis.errors import DocumentError, StoreError
    from metis_schema import v1

    with Store.open(":memory:") as store:
        sid = store.create_session("/w").id
        (good,) = _as_v1([user(sid)])
        broken = v1.Message.model_construct(**{**dict(good), "content": []})  # never validated
        with pytest.raises(DocumentError, match="content") as caught:
            store.append(broken)
        assert "serializ" not in str(caught.value).lower()
        with pytest.raises(StoreError, match=r"not a storable message: a builtins\.dict") as refused:
            store.append({"id": good.id})  # type: ignore[arg-type]
        assert f"metis_schema.v{CURRENT_VERSION}.Message" in str(refused.value)
        assert store.load_session(sid) == []
