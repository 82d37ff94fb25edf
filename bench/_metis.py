"""metis's way of doing the benchmark's jobs, through its public API only (`metis.adapters`,
`AdapterOptions`, `ToolIdMap`, `RequestContext`, the Store's append_many / load_session), so
the benchmark measures whatever the adapters and the store are underneath."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import orjson
from metis import RequestContext, ToolIdMap, adapters
from metis.adapters import WireImport
from metis.store import Store

from bench._chat import ANTHROPIC_MODEL, REPLY_BYTES, Shape, openai_request, shape_of
from bench._contender import Contender, ReplyShape

MODEL = f"anthropic:{ANTHROPIC_MODEL}"
SESSION = "sess_bench"


def imported(body: dict[str, Any], session_id: str = SESSION) -> tuple[WireImport, ToolIdMap]:
    """An OpenAI Chat request body read as canonical messages (the OpenAI adapter's import)."""
    tool_ids = ToolIdMap(session_id)
    return adapters.get("openai").from_wire_request(body, session_id=session_id, tool_ids=tool_ids), tool_ids


def _anthropic_shape(body: dict[str, Any]) -> Shape:
    if not body.get("system") or len(body.get("tools", ())) != 2:
        raise AssertionError("metis's body lacks the system prompt or the tools")
    return shape_of(body["messages"])


def to_anthropic(n: int) -> Contender:
    """`to_wire` of the Anthropic adapter: the canonical conversation -> the request body.

    The conversation is the `n`-message OpenAI one imported once (untimed), and the tool id
    map is the session's: after the first request it holds every tool id's wire id, as a
    session's map does for the history it has sent before.
    """
    wire_import, tool_ids = imported(openai_request(n))
    options = dataclasses.replace(wire_import.options, model=MODEL, tool_ids=tool_ids)
    adapter = adapters.get("anthropic")

    def run() -> Any:
        return adapter.to_wire(wire_import.messages, wire_import.tools, options)

    return Contender("metis to_wire", run, _anthropic_shape)


def convert(body: dict[str, Any], source_format: str = "openai") -> Contender:
    """What `metis convert --from <source_format> --to anthropic` does with a request body
    (OpenAI Chat, or OpenRouter's dialect of it): import it (a fresh tool id map, as each
    conversion has), then write it for Anthropic."""
    source, target = adapters.get(source_format), adapters.get("anthropic")

    def run() -> Any:
        tool_ids = ToolIdMap("convert")
        wire_import = source.from_wire_request(dict(body), session_id="convert", tool_ids=tool_ids)
        options = dataclasses.replace(wire_import.options, model=MODEL, tool_ids=tool_ids)
        return target.to_wire(wire_import.messages, wire_import.tools, options)

    return Contender("metis from_wire_request + to_wire", run, _anthropic_shape)


def reply() -> Contender:
    """The reply's bytes -> one complete canonical Message, its usage priced: a new request's
    context (and tool id map) each time, as each reply has."""
    adapter = adapters.get("anthropic")

    def run() -> Any:
        context = RequestContext(session_id=SESSION, model=MODEL, tool_ids=ToolIdMap(SESSION))
        return adapter.from_wire_response(orjson.loads(REPLY_BYTES), context)

    def shape(out: Any) -> ReplyShape:
        usage = out.metadata.usage
        if usage is None or not usage.cost_usd:
            raise AssertionError("metis's reply has no priced usage")
        calls = sum(1 for block in out.content if block.type == "tool_use")
        return ReplyShape(len(out.content), calls, usage.output_tokens)

    return Contender("metis from_wire_response", run, shape)


class StoredSession:
    """A store file holding the `n`-message conversation as one session (appended untimed,
    in batches), and the messages it was given, to check what a load returns."""

    def __init__(self, n: int) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="metis-bench-peers-")
        wire_import, _ = imported(openai_request(n))
        self.messages = wire_import.messages
        path = Path(self._directory.name) / "session.sqlite3"
        with_session = Store.open(path)
        with_session.create_session("/bench", session_id=SESSION)
        for start in range(0, n, 1000):
            with_session.append_many(self.messages[start : start + 1000])
        with_session.close()
        self.store = Store.open(path)

    def load(self) -> Contender:
        """`Store.load_session`: the stored rows -> canonical Messages."""

        def run() -> Any:
            return self.store.load_session(SESSION)

        def check(out: Any) -> int:
            if out != self.messages:
                raise AssertionError("metis's store read back another conversation than it was given")
            return len(out)

        return Contender("metis Store.load_session", run, check)

    def close(self) -> None:
        self.store.close()
        self._directory.cleanup()
