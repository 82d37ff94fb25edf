"""Paged reading of a session (issue 17, item 9): `Store.iter_messages` and `read_pages`
give what `load_session` and `read_session` give, a page at a time, and a reader walking
a long session holds one page, not the session. On SQLite and on PostgreSQL."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metis.errors import SessionNotFoundError, StoreError
from metis.store import Store, open_store

from tests.support.store_support import BACKENDS, assistant, conversation, new_target, user


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with open_store(new_target(request.param, tmp_path)) as s:
        yield s


def _session(store: Store, turns: int) -> str:
    sid = store.create_session("/w").id
    store.append_many(conversation(sid, turns))
    return sid


@pytest.mark.parametrize("page_size", [1, 2, 3, 7, 12, 13, 500])
def test_the_paged_read_is_the_whole_read(store: Store, page_size: int) -> None:
    sid = _session(store, 3)  # 12 messages: pages that divide it, and ones that do not
    other = _session(store, 2)  # interleaved rows of another session stay out
    store.append(user(sid, "one more"))
    store.append(user(other, "elsewhere"))
    whole = store.load_session(sid)
    assert len(whole) == 13
    assert list(store.iter_messages(sid, page_size=page_size)) == whole
    pages = list(store.read_pages(sid, page_size=page_size))
    assert [m for page in pages for m in page.messages] == store.read_session(sid).messages
    assert all(len(page.messages) <= page_size for page in pages)


def test_paging_keeps_load_sessions_filters(store: Store) -> None:
    sid = _session(store, 2)
    store.upsert_partial(assistant(sid, "stream…", status="partial"))
    mark = store.load_session(sid)[1].id
    for include_partial in (True, False):
        assert list(store.iter_messages(sid, include_partial=include_partial, page_size=2)) == (
            store.load_session(sid, include_partial=include_partial)
        )
    assert list(store.iter_messages(sid, after=mark, page_size=2)) == store.load_session(sid, after=mark)


def test_a_message_appended_between_pages_is_read_once_at_the_end(store: Store) -> None:
    sid = _session(store, 2)
    pages = store.iter_messages(sid, page_size=2)
    first = [next(pages), next(pages)]
    late = user(sid, "appended while reading")
    store.append(late)
    rest = list(pages)
    assert [m.id for m in first + rest] == [m.id for m in store.load_session(sid)]
    assert rest[-1].id == late.id


def test_bad_arguments_are_store_errors(store: Store) -> None:
    sid = _session(store, 1)
    with pytest.raises(SessionNotFoundError):
        next(store.iter_messages("sess_nobody"))
    for bad in (0, -1):
        with pytest.raises(StoreError, match="page_size must be a positive integer"):
            next(store.iter_messages(sid, page_size=bad))


def _small_session(store: Store, n: int) -> str:
    sid = store.create_session("/w").id
    store.append_many([user(sid, f"m{i}") for i in range(n)])
    return sid


def _peak(fn: object) -> int:
    """Peak traced memory (bytes) while `fn()` runs."""
    assert callable(fn)
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_walking_a_session_holds_a_page_not_the_session(store: Store) -> None:
    small, large = _small_session(store, 1_000), _small_session(store, 10_000)

    def walk(sid: str) -> None:
        count = 0
        for _ in store.iter_messages(sid, page_size=100):
            count += 1
        assert count in {1_000, 10_000}

    walked_small, walked_large = _peak(lambda: walk(small)), _peak(lambda: walk(large))
    # Ten times the messages, about the same peak: the page bounds it (slack for the
    # allocator and the driver's statement cache).
    assert walked_large < 1.5 * walked_small, (walked_small, walked_large)
    # The whole read of the large session holds all of it: the bound above is not vacuous.
    loaded_large = _peak(lambda: store.load_session(large))
    assert loaded_large > 5 * walked_large, (walked_large, loaded_large)


# --- the CLI reads sessions a page at a time ------------------------------------------------------


def _cli(db: Path, *args: str) -> str:
    from click.testing import CliRunner
    from metis.cli import cli

    result = CliRunner().invoke(cli, ["--db", str(db), *args], env={"COLUMNS": "100"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


SHOWN = (
    ("show", "{sid}"),
    ("show", "{sid}", "--last", "3"),
    ("show", "{sid}", "--json"),
    ("show", "{sid}", "--json", "--last", "2"),
    ("show", "{sid}", "--json", "--last", "99"),
    ("sessions",),
    ("price", "{sid}"),
    ("export", "{sid}", "--format", "jsonl-messages"),
    ("export", "{sid}", "--format", "otel"),
)


def test_cli_output_is_the_same_read_in_pages_of_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "cli.sqlite3"
    _cli(db, "demo")
    (sid,) = [info.id for info in Store.open(db).list_sessions()]
    whole = {args: _cli(db, *(a.format(sid=sid) for a in args)) for args in SHOWN}
    pages: list[int] = []
    iter_messages, read_pages = Store.iter_messages, Store.read_pages

    def small_iter(self: Store, session_id: str, **kw: object) -> object:
        pages.append(1)
        return iter_messages(self, session_id, **{**kw, "page_size": 2})  # type: ignore[arg-type]

    def small_read(self: Store, session_id: str, **kw: object) -> object:
        pages.append(1)
        return read_pages(self, session_id, **{**kw, "page_size": 2})  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "iter_messages", small_iter)
    monkeypatch.setattr(Store, "read_pages", small_read)
    for args, text in whole.items():
        before = len(pages)
        assert _cli(db, *(a.format(sid=sid) for a in args)) == text, args
        # `sessions` reads no message: the database counts them (Store.session_stats).
        assert args == ("sessions",) or len(pages) > before, f"{args} did not read in pages"
    assert json.loads(whole[SHOWN[2]])["message_count"] == 10  # the demo's ten messages, two a page


def test_exporting_a_long_session_holds_a_page_not_the_session(tmp_path: Path) -> None:
    from metis.cli import cli

    db = tmp_path / "big.sqlite3"
    with Store.open(db) as store:
        small, large = _small_session(store, 500), _small_session(store, 5_000)
    from click.testing import CliRunner

    def export(sid: str) -> None:
        out = tmp_path / f"{sid}.jsonl"
        args = ["--db", str(db), "export", sid, "--format", "jsonl-messages", "-o", str(out)]
        assert CliRunner().invoke(cli, args, catch_exceptions=False).exit_code == 0
        assert out.read_text().count('"role":"user"') in {500, 5_000}

    export(small)  # imports and caches warmed outside the measured runs
    peak_small, peak_large = _peak(lambda: export(small)), _peak(lambda: export(large))
    assert peak_large < 1.5 * peak_small, (peak_small, peak_large)


def test_the_async_store_pages_too(store: Store) -> None:
    import asyncio

    from metis.store import AsyncStore

    sid = _session(store, 3)

    async def walk() -> list[object]:
        return [m async for m in AsyncStore(store).iter_messages(sid, page_size=5)]

    assert asyncio.run(walk()) == store.load_session(sid)


# --- exports and views that grow with the work (issue 29, item 9) ---------------------------------


def _chat_session(store: Store, n: int) -> str:
    """`n` messages: user questions and assistant answers (one model call per two messages)."""

    sid = store.create_session("/w").id
    store.append_many([user(sid, f"q{i}") if i % 2 == 0 else assistant(sid, f"a{i}") for i in range(n)])
    return sid


def _export(db: Path, sid: str, out: Path) -> int:
    from click.testing import CliRunner
    from metis.cli import cli

    args = ["--db", str(db), "export", sid, "--format", "otel", "-o", str(out)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out.stat().st_size


def test_the_otel_export_is_linear_in_the_session(tmp_path: Path) -> None:
    """Each record used to repeat its call's whole input: 4x the messages wrote 16x the bytes."""
    db = tmp_path / "otel.sqlite3"
    with Store.open(db) as store:
        short, long = _chat_session(store, 400), _chat_session(store, 1_600)
    small, large = _export(db, short, tmp_path / "s.jsonl"), _export(db, long, tmp_path / "l.jsonl")
    assert large < 4.5 * small, (small, large)


def test_the_otel_export_holds_a_page_not_the_session(tmp_path: Path) -> None:
    db = tmp_path / "otel-memory.sqlite3"
    with Store.open(db) as store:
        small, large = _chat_session(store, 500), _chat_session(store, 5_000)
    _export(db, small, tmp_path / "warm.jsonl")  # imports and caches warmed outside the measured runs
    peak_small = _peak(lambda: _export(db, small, tmp_path / "small.jsonl"))
    peak_large = _peak(lambda: _export(db, large, tmp_path / "large.jsonl"))
    assert peak_large < 1.5 * peak_small, (peak_small, peak_large)


def test_sessions_reads_no_message_into_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list is counted by the database: decoding a row would fail here, and nothing does."""
    from click.testing import CliRunner
    from metis.cli import cli
    from metis.cli._tables import Totals
    from metis.store import _codec

    db = tmp_path / "list.sqlite3"
    with Store.open(db) as store:
        sid = _session(store, 3)
        totals = Totals.of(store.load_session(sid))

    def no_decode(*_: object, **__: object) -> object:
        raise AssertionError("a message was read into a model")

    monkeypatch.setattr(_codec, "decode", no_decode)
    result = CliRunner().invoke(cli, ["--db", str(db), "sessions"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    (line,) = [row for row in result.stdout.splitlines() if row.startswith(sid[:12])]
    assert line.split()[-3:] == [str(totals.messages), f"{totals.tokens:,}", f"${totals.cost:.4f}"]


def test_show_wraps_a_long_line_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One line without a space: textwrap cut it a line at a time, copying what was left each
    time (time in the square of its length). `show` cuts it in one pass: asserted by what
    runs, not by a clock (a loaded machine makes timings lie), and the lines are textwrap's."""
    import textwrap

    from click.testing import CliRunner
    from metis.cli import _tables, cli

    calls = {"ours": 0, "textwrap's": 0}
    ours, theirs = _tables._Wrapper._handle_long_word, textwrap.TextWrapper._handle_long_word

    def counted_ours(self: Any, *args: Any) -> None:
        calls["ours"] += 1
        ours(self, *args)

    def counted_theirs(self: Any, *args: Any) -> None:
        calls["textwrap's"] += 1
        theirs(self, *args)

    monkeypatch.setattr(_tables._Wrapper, "_handle_long_word", counted_ours)
    monkeypatch.setattr(textwrap.TextWrapper, "_handle_long_word", counted_theirs)
    db = tmp_path / "long-line.sqlite3"
    with Store.open(db) as store:
        sid = store.create_session("/w").id
        store.append(user(sid, "x" * (1 << 20)))
    result = CliRunner().invoke(cli, ["--db", str(db), "show", sid], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert calls == {"ours": 1, "textwrap's": 0}, "the 1 MiB word is cut in one pass"
    word = "y" * 1000
    assert _tables.wrap(word, 80, initial_indent="  ", subsequent_indent="  ") == textwrap.wrap(
        word, 80, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
    )
