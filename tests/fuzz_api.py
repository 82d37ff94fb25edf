"""Hostile values through the Python API, for the hostile-input suite (issue 29, item 11).

JSON text cannot hold a lone surrogate, a NaN, an infinity or (as metis reads it) an
integer past 4,300 digits, so the wire and document fuzzers only meet them where a caller
hands metis Python values. This module is that caller: valid messages of every shape
(`test_store_support.every_shape`) with one such value put at one string or number
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
from functools import cache
from typing import Any

import httpx
from fuzz_documents import seed_documents
from fuzz_support import HUGE_INT, MODELS, PROVIDERS, SESSION, paths, with_surrogate
from hypothesis import strategies as st
from metis import _json, adapters
from metis.adapters import AdapterOptions
from metis.canonical import message_hash, message_to_json
from metis.errors import MetisError
from metis.ids import ToolIdMap
from metis.store import Store
from metis_schema.v2 import Message
from pydantic import ValidationError

HOSTILE: list[Any] = [float("nan"), float("inf"), float("-inf"), HUGE_INT, -HUGE_INT, "\ud800"]
"""Values no JSON text holds (a lone surrogate also goes into existing text and keys)."""


def _hostile(draw: st.DrawFn, old: Any) -> Any:
    value = draw(st.sampled_from([*HOSTILE, "surrogate"]))
    return with_surrogate(old) if value == "surrogate" else value


@st.composite
def hostile_value(draw: st.DrawFn, seed: Any) -> Any:
    """`seed` (a JSON value) with one hostile value at one position: a leaf replaced, a key
    given a lone surrogate, or an object given a new key holding one."""
    value = copy.deepcopy(seed)
    path = draw(st.sampled_from(paths(value)))
    if not path:
        return _hostile(draw, value)
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    node = parent[last]
    if isinstance(node, dict) and draw(st.booleans()):
        if node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node)))
            parent[last] = {(with_surrogate(k) if k == key else k): v for k, v in node.items()}
        else:
            node["zz_hostile"] = _hostile(draw, None)
    else:
        parent[last] = _hostile(draw, node)
    return value


@st.composite
def hostile_message(draw: st.DrawFn) -> Message | None:
    """A message of every shape with one hostile value in it, or None when the generated
    model refuses to build it (then metis never sees it)."""
    doc = draw(hostile_value(draw(st.sampled_from(seed_documents()))))
    try:
        return Message.model_validate(doc)
    except ValidationError:
        return None


OPTION_FIELDS = ("temperature", "top_p", "max_tokens", "thinking_budget", "stop", "tool_choice", "extra")


@st.composite
def hostile_options(draw: st.DrawFn) -> dict[str, Any]:
    """AdapterOptions fields, one of them (or a value inside it) hostile."""
    name = draw(st.sampled_from(OPTION_FIELDS))
    seeds: dict[str, Any] = {
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 100,
        "thinking_budget": 2048,
        "stop": ["END", "STOP"],
        "tool_choice": "auto",
        "extra": {"metadata": {"user": "u1"}, "seed": 7},
    }
    return {name: draw(hostile_value(seeds[name]))}


@st.composite
def hostile_policy(draw: st.DrawFn) -> dict[str, Any]:
    """A routing policy with one hostile value in it."""
    policy = {"mode": "default", "fallbacks": ["openai:gpt-4.1"], "max_cost_usd": 0.5, "weights": {"a": 1}}
    value = draw(hostile_value(policy))
    return value if isinstance(value, dict) else {"policy": value}


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
    from test_store_support import user

    return user(SESSION)


def untyped_message(message: Message | None) -> BaseException | None:
    """The non-metis exception a hostile message raised anywhere it goes, or None."""
    if message is None:
        return None
    steps = [lambda: message_hash(message), lambda: message_to_json(message)]
    steps += [lambda p=p: _send_body(p, [message]) for p in PROVIDERS]  # type: ignore[misc]
    steps.append(lambda: _append(message))
    for step in steps:
        found = _untyped(step)
        if found is not None:
            return found
    return None


def _append(message: Message) -> None:
    with Store.open(None) as store:
        store.create_session("/w", session_id=message.session_id)
        store.append(message)


def untyped_options(fields: dict[str, Any]) -> BaseException | None:
    """The non-metis exception hostile options raised building a request, or None."""
    for provider in PROVIDERS:
        found = _untyped(lambda p=provider: _send_body(p, [_user()], **fields))  # type: ignore[misc]
        if found is not None:
            return found
    return None


def untyped_policy(policy: dict[str, Any]) -> BaseException | None:
    """The non-metis exception a hostile routing policy raised creating a session, or None."""

    def run() -> None:
        with Store.open(None) as store:
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


def untyped_send(fields: dict[str, Any]) -> BaseException | None:
    """`Session.send("hi", **fields)` through a real Client and store: anything but a
    MetisError is a finding, and so is a request sent or a message stored."""
    from metis.client import Client

    unsent = Unsent()
    with (
        Store.open(None) as store,
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
    "hostile_message",
    "hostile_options",
    "hostile_policy",
    "hostile_value",
    "untyped_message",
    "untyped_options",
    "untyped_policy",
    "untyped_send",
]
