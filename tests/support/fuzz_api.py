"""Hostile values through the Python API, for the hostile-input suite (issue 29, item 11).

JSON text cannot hold a lone surrogate, a NaN, an infinity or (as metis reads it) an
integer past 4,300 digits, so the wire and document fuzzers only meet them where a caller
hands metis Python values. This module is that caller: valid messages of every shape
(`store_support.every_shape`) with one such value put at one string or number
position (or key), request options holding one (`temperature=nan`, a stop string with a
lone surrogate, a provider option 4,400 digits long), and routing policies holding one,
go through what takes them: hashing and canonical JSON, every adapter's `to_wire` and
token estimate and the JSON the client would send, the store's append, `create_session`,
and `Session.send` (whose transport must never be reached with such a body). Anything
but a MetisError is a finding.

A message the generated model itself refuses (pydantic's ValidationError, e.g. a lone
surrogate in an id, which has a pattern) never reaches metis: such inputs are skipped.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from functools import cache
from typing import Any

import httpx
from hypothesis import strategies as st
from metis import _json, adapters
from metis.adapters import AdapterOptions
from metis.canonical import dump_message, message_hash, message_to_json
from metis.errors import MetisError
from metis.ids import ToolIdMap
from metis.store import Store
from metis_schema.v3 import Message
from pydantic import ValidationError

from tests.support.fuzz_documents import NotReadBack, seed_documents
from tests.support.fuzz_support import HUGE_INT, MODELS, PROVIDERS, SESSION, paths, with_surrogate


class Drawn:
    """A drawn input whose repr is safe: hypothesis prints the inputs of a failing example,
    and the repr of an integer past 4,300 digits raises (of a message holding one too)."""

    def __init__(self, value: Any, note: str) -> None:
        self.value = value
        self.note = note

    def __repr__(self) -> str:
        return f"<{self.note}>"


def _note(value: Any) -> str:
    """Where the hostile value is, said safely (the fuzzer's own walk: it runs against
    older trees too, to count what they let escape)."""
    stack: list[tuple[list[Any], Any]] = [([], value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if any(0xD800 <= ord(c) <= 0xDFFF for c in key):
                    return f"a key with a lone surrogate at {where!a}"
                stack.append(([*where, key], item))
        elif isinstance(node, list):
            stack.extend(([*where, i], item) for i, item in enumerate(node))
        elif isinstance(node, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in node):
            return f"a lone surrogate at {where!a}"
        elif isinstance(node, float) and not math.isfinite(node):
            return f"{node} at {where!a}"
        elif isinstance(node, int) and abs(node) >= HUGE_INT // 10:
            return f"an integer of 4,400 digits at {where!a}"
    return "nothing hostile"


HOSTILE: list[Any] = [float("nan"), float("inf"), float("-inf"), HUGE_INT, -HUGE_INT, "\ud800"]
"""Values no JSON text holds (a lone surrogate also goes into existing text and keys)."""
NUMBERS: list[Any] = [float("nan"), float("inf"), float("-inf"), HUGE_INT, -HUGE_INT]


def _hostile(draw: st.DrawFn, old: Any) -> Any:
    """The hostile value of the same kind as `old`, so the value keeps its shape (what a
    field of the wrong type does is the documents fuzzer's part): text gets a lone
    surrogate, a number becomes NaN, an infinity or 4,400 digits long; anything else
    becomes one of HOSTILE."""
    if isinstance(old, str):
        return with_surrogate(old)
    if isinstance(old, int | float) and not isinstance(old, bool):
        return draw(st.sampled_from(NUMBERS))
    return draw(st.sampled_from(HOSTILE))


def _spots(value: Any) -> list[tuple[str | int, ...]]:
    """The positions `hostile_value` changes: text, numbers and objects (not null, booleans or lists)."""
    found = []
    for path in paths(value):
        node = value
        for step in path:
            node = node[step]
        if isinstance(node, str | dict) or (isinstance(node, int | float) and not isinstance(node, bool)):
            found.append(path)
    return found


@st.composite
def hostile_value(draw: st.DrawFn, seed: Any) -> Any:
    """`seed` (a JSON value) with one hostile value at one position of its own kind: text
    given a lone surrogate, a number made NaN, infinite or huge, an object given a key with
    a lone surrogate or a new key holding a hostile value."""
    value = copy.deepcopy(seed)
    spots = _spots(value)
    path = draw(st.sampled_from(spots)) if spots else ()
    if not path:
        return _hostile(draw, value) if not isinstance(value, dict) else {**value, "zz_hostile": HOSTILE[0]}
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    node = parent[last]
    if isinstance(node, dict):
        rename = bool(node) and draw(st.booleans())
        if rename:
            key: str = draw(st.sampled_from(sorted(node)))
            parent[last] = {(with_surrogate(k) if k == key else k): v for k, v in node.items()}
        else:
            node["zz_hostile"] = draw(st.sampled_from(HOSTILE))
    else:
        parent[last] = _hostile(draw, node)
    return value


@cache
def api_seed_documents() -> tuple[dict[str, Any], ...]:
    """Canonical messages to put hostile values into: every shape the store tests build,
    and what every provider's recorded responses and requests read as (citations, server
    tools, thinking, media, documents...), as JSON-mode dumps."""
    from tests.support.fuzz_support import context, parsed, seeds

    found = list(seed_documents())
    for provider in PROVIDERS:
        adapter = adapters.get(provider)
        for seed in seeds(provider, "response"):
            message = adapter.from_wire_response(parsed(seed.data), context(provider))
            found.append(dump_message(message))
        for seed in seeds(provider, "request"):
            imported = adapter.from_wire_request(
                parsed(seed.data), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
            )
            found.extend(dump_message(m) for m in imported.messages)
    return tuple(found)


@cache
def _open_paths() -> tuple[tuple[int, tuple[str | int, ...]], ...]:
    """(seed index, path) of every position of the seed messages where the generated model
    takes a lone surrogate or a NaN (free text, tool inputs, provider data...): most
    positions (ids, times, tags) are refused by the model itself, and drawing them would
    leave few messages to try."""
    found = []
    for index, doc in enumerate(api_seed_documents()):
        spots = set(_spots(doc))
        for path in paths(doc):
            if path and path in spots and _validates(_put(doc, path, _probe(_at(doc, path)))):
                found.append((index, path))
    return tuple(found)


def _at(doc: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _probe(old: Any) -> Any:
    """A hostile value of `old`'s kind, to ask the model whether it takes one there."""
    if isinstance(old, dict):
        return {**old, "zz_hostile": float("nan")}
    return with_surrogate(old) if isinstance(old, str) else float("nan")


def _put(doc: Any, path: tuple[str | int, ...], value: Any) -> Any:
    out = copy.deepcopy(doc)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return out


def _validates(doc: Any) -> bool:
    try:
        Message.model_validate(doc)
    except ValidationError:
        return False
    return True


@st.composite
def hostile_message(draw: st.DrawFn) -> Drawn:
    """A message of every shape with one hostile value at a position the model takes one
    (or, now and then, anywhere), or None when the generated model refuses to build it
    (then metis never sees it)."""
    if draw(st.integers(0, 4)):
        index, path = draw(st.sampled_from(_open_paths()))
        doc = api_seed_documents()[index]
        old = _at(doc, path)
        doc = _put(doc, path, _probe(old) if isinstance(old, dict) else _hostile(draw, old))
    else:
        doc = draw(hostile_value(draw(st.sampled_from(api_seed_documents()))))
    try:
        return Drawn(Message.model_validate(doc), f"message {doc.get('id')}: {_note(doc)}")
    except (ValidationError, ValueError):  # ValueError: pydantic on an integer past 4,300 digits
        return Drawn(None, "a message the model refused")


OPTION_FIELDS = (
    "temperature",
    "top_p",
    "max_tokens",
    "thinking_budget",
    "stop",
    "tool_choice",
    "extra",
    "provider_options",
)


@st.composite
def hostile_options(draw: st.DrawFn) -> Drawn:
    """AdapterOptions fields, one of them (or a value inside it) hostile."""
    name = draw(st.sampled_from(OPTION_FIELDS))
    seeds: dict[str, Any] = {
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 100,
        "thinking_budget": 2048,
        "stop": ["END", "STOP"],
        "tool_choice": "auto",
        "extra": {"metadata": {"user": "u1", "tags": ["a", "b"]}, "seed": 7, "logit_bias": {"50256": -100.0}},
        "provider_options": {
            "openai": {"seed": 7, "metadata": {"user": "u1"}},
            "anthropic": {"metadata": {"user_id": "u1"}, "top_k": 40},
            "gemini": {"generationConfig": {"topK": 40.0, "candidateCount": 1}},
        },
    }
    fields = {name: draw(hostile_value(seeds[name]))}
    return Drawn(fields, f"options: {_note(fields)}")


@st.composite
def hostile_policy(draw: st.DrawFn) -> Drawn:
    """A routing policy with one hostile value in it."""
    policy = {"mode": "default", "fallbacks": ["openai:gpt-4.1"], "max_cost_usd": 0.5, "weights": {"a": 1}}
    value = draw(hostile_value(policy))
    policy = value if isinstance(value, dict) else {"policy": value}
    return Drawn(policy, f"routing policy: {_note(policy)}")


# --- running one input ----------------------------------------------------------------------


def _untyped(run: Any) -> BaseException | None:
    try:
        run()
    except MetisError:
        return None
    except Exception as exc:  # the suite's whole point: anything else is a finding
        return exc
    return None


def _options(provider: str, **fields: Any) -> AdapterOptions:
    return AdapterOptions(model=MODELS[provider], session_id=SESSION, tool_ids=ToolIdMap(SESSION), **fields)


def _send_body(provider: str, messages: list[Message], **fields: Any) -> None:
    """What the client does with a request: the adapter's body, written as JSON."""
    adapter = adapters.get(provider)
    body = adapter.to_wire(messages, [], _options(provider, **fields))
    adapter.estimate_input_tokens(messages, [])
    _json.dumps(body)


@cache
def _user() -> Message:
    from tests.support.store_support import user

    return user(SESSION)


def untyped_message(drawn: Drawn) -> BaseException | None:
    """The non-metis exception a hostile message raised anywhere it goes, or None."""
    message: Message | None = drawn.value
    if message is None:
        return None
    steps: list[Callable[[], object]] = [lambda: message_hash(message), lambda: message_to_json(message)]
    steps += [lambda p=p: _send_body(p, [message]) for p in PROVIDERS]  # type: ignore[misc]
    steps.append(lambda: _append(message))
    for step in steps:
        found = _untyped(step)
        if found is not None:
            return found
    return None


def _append(message: Message) -> None:
    """Stored, or refused; what is stored must read back as it was given (a key's lone
    surrogate was once stored as U+FFFD without a word)."""
    with Store.open(":memory:") as store:
        store.create_session("/w", session_id=message.session_id)
        store.append(message)
        (back,) = store.load_session(message.session_id)
        if back.model_dump() != message.model_dump():
            raise NotReadBack(f"message {message.id} was stored and read back different")


def untyped_options(drawn: Drawn) -> BaseException | None:
    """The non-metis exception hostile options raised building a request, or None."""
    fields: dict[str, Any] = drawn.value
    for provider in PROVIDERS:
        found = _untyped(lambda p=provider: _send_body(p, [_user()], **fields))
        if found is not None:
            return found
    return None


def untyped_policy(drawn: Drawn) -> BaseException | None:
    """The non-metis exception a hostile routing policy raised creating a session, or None."""
    policy: dict[str, Any] = drawn.value

    def run() -> None:
        with Store.open(":memory:") as store:
            store.create_session("/w", routing_policy=policy)

    return _untyped(run)


class Unsent:
    """An httpx transport that must never be reached: a send with a hostile option is
    refused before anything goes out (`requests` counts what did)."""

    def __init__(self) -> None:
        self.requests = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return httpx.Response(500, json={"error": {"message": "a hostile request was sent"}})


def untyped_send(drawn: Drawn) -> BaseException | None:
    """`Session.send("hi", **fields)` through a real Client and store: anything but a
    MetisError is a finding, and so is a request sent or a message stored."""
    fields: dict[str, Any] = drawn.value
    from metis.client import Client

    unsent = Unsent()
    with (
        Store.open(":memory:") as store,
        Client(
            store, transport=unsent.transport(), api_keys={"openai": "fuzz-key-not-secret"}, max_retries=0
        ) as client,
    ):
        session = client.session(MODELS["openai"], workspace="/w")
        found = _untyped(lambda: session.send("hi", **fields))
        if found is None and unsent.requests:
            return AssertionError(f"a request with options {sorted(fields)} was sent")
        if found is None and store.load_session(session.id):
            return AssertionError(f"a refused send with options {sorted(fields)} stored a message")
    return found


__all__ = [
    "HOSTILE",
    "Drawn",
    "hostile_message",
    "hostile_options",
    "hostile_policy",
    "hostile_value",
    "untyped_message",
    "untyped_options",
    "untyped_policy",
    "untyped_send",
]
