"""Mutations of the recorded provider bodies and streams under tests/golden/, for the
hostile-input suite (issue 17, item 4).

Every wire input an adapter reads (a response, a stream, a recorded request, an error
body) is mutated the ways a broken server or proxy breaks them: a value swapped for another
type, null, deleted, nested far past any sane depth, made huge; a stream cut, split at
odd places, its events dropped, repeated or mutated like a body. Round three (issue 29)
adds what no JSON text can hold but a Python caller can pass: a lone surrogate put into
any string position (a value or a key), integers past 4,300 digits, NaN and infinities,
and nesting a thousand deep where a migration or an error excerpt recurses. Each mutation is drawn
through hypothesis so failures shrink and runs are reproducible (derandomized).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from metis import adapters
from metis.assembly import RequestContext
from metis.errors import MetisError
from metis.ids import ToolIdMap

from tests.support import golden

ROOT = golden.ROOT
SESSION = "sess_fuzz"
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
    "responses": "responses:gpt-5",
    "mistral": "mistral:magistral-medium-latest",
}
PROVIDERS = sorted(MODELS)
KINDS = ("response", "stream", "request", "error")


def fuzz_settings(examples: int) -> settings:
    """The hostile-input suites' hypothesis settings: `examples` draws, reproducible
    (derandomized, no example database), no deadline and no health check, since the
    drawn inputs are huge or deep on purpose."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@dataclass(frozen=True)
class Seed:
    """One recorded wire input: its provider, kind, file name and bytes."""

    provider: str
    kind: str
    name: str
    data: bytes


def seeds(provider: str, kind: str) -> list[Seed]:
    """The recorded inputs of one kind in a provider folder (expected outputs excluded)."""
    found = []
    for path in sorted((ROOT / provider).glob(f"{kind}_*")):
        if ".golden." in path.name or path.suffix not in (".json", ".sse", ".ndjson"):
            continue
        found.append(Seed(provider, kind, path.name, path.read_bytes()))
    return found


# --- JSON value mutations -----------------------------------------------------------------

Path_ = tuple[str | int, ...]


def paths(value: Any, most_depth: int = 40) -> list[Path_]:
    """Every path into a JSON value (the root included), not descending past `most_depth`
    (a value already nested a thousand deep is mutated at its top, not inside)."""
    found: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [((), value)]
    while stack:
        prefix, node = stack.pop()
        found.append(prefix)
        if len(prefix) >= most_depth:
            continue
        if isinstance(node, dict):
            stack.extend(((*prefix, key), item) for key, item in node.items())
        elif isinstance(node, list):
            stack.extend(((*prefix, index), item) for index, item in enumerate(node))
    return found


def nested(depth: int, leaf: Any, as_list: bool) -> Any:
    """`leaf` wrapped `depth` times in lists or one-key objects."""
    for _ in range(depth):
        leaf = [leaf] if as_list else {"a": leaf}
    return leaf


SURROGATES = ("\ud800", "\udfff", "\udc80")
"""Lone surrogates: code points a Python str holds but UTF-8 (so JSON text) cannot."""
HUGE_INT = 10**4400
"""An integer past the 4,300 digits Python turns into text (and metis reads or writes)."""


def with_surrogate(old: Any) -> Any:
    """A string position given a lone surrogate (inside the old text, when it was text)."""
    if isinstance(old, str):
        middle = len(old) // 2
        return old[:middle] + SURROGATES[len(old) % len(SURROGATES)] + old[middle:]
    return SURROGATES[0]


def as_text(old: Any) -> str:
    """`str(old)`; an integer too long for Python to write as text gives its digits anyway."""
    try:
        return str(old)
    except ValueError:
        return "9" * 4400


REPLACEMENTS: list[Callable[[Any], Any]] = [
    lambda old: None,
    lambda old: 12345,
    lambda old: -1,
    lambda old: 1.5,
    lambda old: True,
    lambda old: "",
    lambda old: "x" * 300,
    lambda old: [old],
    lambda old: [0],
    lambda old: {},
    lambda old: {"type": old},
    lambda old: [],
    lambda old: 10**30,
    lambda old: -(10**19),
    lambda old: "x" * 200_000,
    lambda old: nested(1500, 1, True),
    lambda old: nested(1500, "x", False),
    lambda old: nested(260, {"message": "m"}, False),
    as_text,
    lambda old: {"nested": old, "type": 7},
    # round three (issue 29): values only the Python API can carry
    with_surrogate,
    lambda old: {"\ud800": old},
    lambda old: HUGE_INT,
    lambda old: -HUGE_INT,
    lambda old: float("nan"),
    lambda old: float("inf"),
    lambda old: float("-inf"),
    lambda old: nested(1000, old, False),
    lambda old: nested(1000, {"message": "m"}, True),
]


@st.composite
def mutated_json(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one to three paths mutated (replaced, deleted, given an unknown key, or
    given a lone surrogate in a string or a key)."""
    value = _copied(value)
    for _ in range(draw(st.integers(1, 3))):
        where = paths(value)
        path = draw(st.sampled_from(where))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "extra", "surrogate"]))
        if not path:
            if action == "replace":
                value = draw(st.sampled_from(REPLACEMENTS))(value)
            elif action == "surrogate":
                value = _surrogate_at(draw, value)
            continue
        parent = value
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if action == "delete":
            del parent[last]
        elif action == "extra" and isinstance(parent[last], dict):
            parent[last]["zz_unknown"] = draw(st.sampled_from(REPLACEMENTS))(None)
        elif action == "surrogate":
            parent[last] = _surrogate_at(draw, parent[last])
        else:
            parent[last] = draw(st.sampled_from(REPLACEMENTS))(parent[last])
    return value


def _copied(value: Any) -> Any:
    """A deep copy, with the recursion room a value nested a thousand deep (an earlier
    mutation of the same stream event) needs."""
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        return copy.deepcopy(value)
    finally:
        sys.setrecursionlimit(limit)


def _surrogate_at(draw: st.DrawFn, node: Any) -> Any:
    """`node` with a lone surrogate in one of its string positions: itself when it is text,
    else one of its keys (an object) or a string item (a list), else it becomes one."""
    if isinstance(node, dict) and node:
        key = draw(st.sampled_from(sorted(node)))
        return {(with_surrogate(k) if k == key else k): v for k, v in node.items()}
    if isinstance(node, list):
        texts = [i for i, item in enumerate(node) if isinstance(item, str)]
        if texts:
            index = draw(st.sampled_from(texts))
            return [with_surrogate(item) if i == index else item for i, item in enumerate(node)]
    return with_surrogate(node)


def dumps(value: Any) -> bytes:
    """JSON bytes; values orjson refuses (integers past 64 bits, nesting past 255, lone
    surrogates) are written by the standard library, as a server could (a lone surrogate as
    its `\\ud800` escape, NaN as `NaN`, an integer of any length)."""
    try:
        return orjson.dumps(value)
    except (orjson.JSONEncodeError, TypeError):
        import json
        import sys

        limit, digits = sys.getrecursionlimit(), sys.get_int_max_str_digits()
        sys.setrecursionlimit(max(limit, 10_000))
        sys.set_int_max_str_digits(0)
        try:
            return json.dumps(value).encode()
        finally:
            sys.setrecursionlimit(limit)
            sys.set_int_max_str_digits(digits)


# --- stream mutations ---------------------------------------------------------------------

_SSE_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def stream_events(seed: Seed) -> tuple[list[bytes], bytes]:
    """A stream split into its events (each with its terminator) and the separator style."""
    if seed.name.endswith(".ndjson"):
        return [line + b"\n" for line in seed.data.split(b"\n") if line.strip()], b"\n"
    if seed.name.endswith(".json"):  # a streamed JSON array: mutate it as one body
        return [seed.data], b""
    parts = [part for part in _SSE_EVENT_END.split(seed.data) if part.strip()]
    return [part + b"\n\n" for part in parts], b"\n\n"


def _mutate_event(draw: st.DrawFn, event: bytes) -> bytes:
    """One event with its JSON payload mutated (SSE `data:` line, NDJSON line, or array)."""
    prefix, _, payload = event.partition(b"data: ") if b"data: " in event else (b"", b"", event)
    text = payload.strip()
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return event
    mutated = dumps(draw(mutated_json(value)))
    if prefix or b"data: " in event:
        return prefix + b"data: " + mutated + b"\n\n"
    return mutated + (b"\n" if event.endswith(b"\n") else b"")


@st.composite
def mutated_stream(draw: st.DrawFn, seed: Seed) -> list[bytes] | list[str]:
    """The stream's body, mutated, as the pieces it arrives in (bytes; now and then text,
    which `stream_response` also takes, holding a lone surrogate)."""
    events, _ = stream_events(seed)
    for _ in range(draw(st.integers(1, 3))):
        if not events:
            break
        index = draw(st.integers(0, len(events) - 1))
        action = draw(st.sampled_from(["mutate", "mutate", "mutate", "drop", "repeat", "garbage"]))
        if action == "mutate":
            events[index] = _mutate_event(draw, events[index])
        elif action == "drop":
            del events[index]
        elif action == "repeat":
            events.insert(index, events[index])
        else:
            events.insert(
                index, draw(st.sampled_from([b"data: {\n\n", b"data: [DONE]\n\n", b"\xff\xfe\n", b"{}\n"]))
            )
    body = b"".join(events)
    if draw(st.booleans()):  # cut
        body = body[: draw(st.integers(0, len(body)))]
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(body[start:cut])
        start = cut
    pieces.append(body[start:])
    if draw(st.integers(0, 4)) == 0:  # the stream as text pieces, a lone surrogate in one
        texts = [piece.decode("utf-8", "replace") for piece in pieces]
        index = draw(st.integers(0, len(texts) - 1))
        texts[index] = with_surrogate(texts[index])
        return texts
    return pieces


# --- running one input ----------------------------------------------------------------------


def context(provider: str) -> RequestContext:
    return RequestContext(session_id=SESSION, model=MODELS[provider], tool_ids=ToolIdMap(SESSION))


def run(provider: str, kind: str, wire: Any) -> None:
    """Feed one (mutated) input to the adapter operation that reads its kind."""
    adapter = adapters.get(provider)
    if kind == "response":
        adapter.from_wire_response(wire, context(provider))
    elif kind == "stream":
        adapter.assemble_stream(wire, context(provider))
    elif kind == "request":
        adapter.from_wire_request(wire, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    else:
        adapter.parse_error(wire, 400)


def untyped(provider: str, kind: str, wire: Any) -> BaseException | None:
    """The non-metis exception an input raised, or None (nothing, or a MetisError)."""
    try:
        run(provider, kind, wire)
    except MetisError:
        return None
    except Exception as exc:  # the suite's whole point: anything else is a finding
        return exc
    return None


def parsed(data: bytes) -> Any:
    return orjson.loads(data)


__all__ = [
    "KINDS",
    "MODELS",
    "PROVIDERS",
    "SURROGATES",
    "Seed",
    "dumps",
    "mutated_json",
    "mutated_stream",
    "parsed",
    "run",
    "seeds",
    "untyped",
    "with_surrogate",
]
