"""Hypothesis strategies derived from the wire shapes each adapter declares
(`metis.adapters.<pkg>.wire`), for the hostile-input suite (issue 17, item 4).

`shaped(T)` draws a value structurally plausible for the TypedDict (or union, list, ...)
`T`: required keys always, optional keys sometimes, literals from their declared values,
a `type` string from the type names the recorded traffic uses. `hostile(T)` then breaks it
where a server or proxy would (`fuzz_support.mutated_json`: a field of the wrong type,
null, deleted, huge, nested deep), so the adapter's reader meets bodies that get past its
first checks and fail further in. The recorded goldens cover what providers send; these
cover what the declared shapes allow and a little beyond.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from hypothesis import strategies as st
from typing_extensions import get_type_hints, is_typeddict

from tests.support import golden
from tests.support.fuzz_support import mutated_json

_MAX_DEPTH = 7
"""Nesting past which a shape draws its smallest plausible value (recursive shapes end)."""


@cache
def type_names() -> tuple[str, ...]:
    """Every string a `type` key holds in the recorded traffic (SSE `data:` lines included)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            kind = value.get("type")
            if isinstance(kind, str):
                found.add(kind)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in golden.ROOT.rglob("*"):
        if not path.is_file() or path.suffix not in (".json", ".sse", ".ndjson"):
            continue
        data = path.read_bytes()
        for line in [data, *data.splitlines()]:
            text = line.removeprefix(b"data: ").strip()
            try:
                walk(orjson.loads(text))
            except orjson.JSONDecodeError:
                continue
    return tuple(sorted(found))


_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), _TEXT)
_ANY = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)


def _strip(tp: Any) -> Any:
    """The type under Annotated, Required and NotRequired wrappers."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated or origin in (typing.Required, typing.NotRequired):
            tp = typing.get_args(tp)[0]
        else:
            return tp


def _scalar(tp: Any, key: str | None) -> st.SearchStrategy[Any] | None:
    if tp is str:
        return st.sampled_from(type_names()) | _TEXT if key == "type" else _TEXT
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(0, 10**6)
    if tp is float:
        return st.floats(0, 1e6, allow_nan=False)
    if tp in (type(None), None):
        return st.none()
    if tp is Any or tp is object:
        return _ANY
    return None


def shaped(tp: Any, depth: int = 0, key: str | None = None) -> st.SearchStrategy[Any]:
    """A plausible value of the declared wire type `tp` (see module doc)."""
    tp = _strip(tp)
    simple = _scalar(tp, key)
    if simple is not None:
        return simple
    if is_typeddict(tp):
        return _typed_dict(tp, depth)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([shaped(arg, depth, key) for arg in args])
    if depth >= _MAX_DEPTH:
        return st.just([] if origin in (list, Sequence) else {})
    if origin in (list, Sequence, tuple):
        return st.lists(shaped(args[0], depth + 1) if args else _ANY, max_size=3)
    if origin in (dict, Mapping):
        value = shaped(args[1], depth + 1) if len(args) == 2 else _ANY
        return st.dictionaries(_TEXT, value, max_size=2)
    if isinstance(tp, typing.TypeVar):
        return _ANY
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):  # a NamedTuple
        return st.tuples(*(_TEXT for _ in tp._fields))
    raise TypeError(f"no strategy for the wire type {tp!r}")


def _typed_dict(tp: Any, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    hints = get_type_hints(tp, include_extras=True)
    if depth >= _MAX_DEPTH:
        hints = {name: hint for name, hint in hints.items() if name in tp.__required_keys__}
    required = {
        name: shaped(hint, depth + 1, name) for name, hint in hints.items() if name in tp.__required_keys__
    }
    optional = {name: shaped(hint, depth + 1, name) for name, hint in hints.items() if name not in required}
    return st.fixed_dictionaries(required, optional=optional)


@dataclass(frozen=True)
class Shapes:
    """The declared shapes of one provider's wire input, by the kind the fuzz suite reads."""

    response: Any
    event: Any
    error: Any
    request: Any
    stream: str
    """How events are framed: `sse` (`data:` lines, an `event:` line named by `type` when
    `named`), `ndjson`, or `sse-json` (Gemini: SSE, each event a response)."""
    named: bool = False


def shapes(provider: str) -> Shapes:
    """The wire module a provider's adapter declares, as Shapes."""
    from metis.adapters.anthropic import wire as anthropic
    from metis.adapters.chat import wire as chat
    from metis.adapters.gemini import wire as gemini
    from metis.adapters.ollama import wire as ollama
    from metis.adapters.responses import wire as responses

    if provider == "anthropic":
        return Shapes(
            anthropic.Response, anthropic.StreamEvent, anthropic.ErrorBody, anthropic.Request, "sse", True
        )
    if provider in ("openai", "openrouter", "mistral"):
        return Shapes(chat.Response, chat.Chunk, chat.Error, chat.Request, "sse")
    if provider == "gemini":
        body = gemini.GenerateContentResponse
        return Shapes(body, body, body, gemini.GenerateContentRequest, "sse")
    if provider == "ollama":
        return Shapes(ollama.ChatResponse, ollama.StreamLine, ollama.StreamLine, ollama.ChatRequest, "ndjson")
    if provider == "responses":
        return Shapes(
            responses.Response, responses.Event, responses.ErrorDetail, responses.Request, "sse", True
        )
    raise KeyError(provider)


@st.composite
def hostile(draw: st.DrawFn, tp: Any) -> Any:
    """A plausible value of `tp`, then (mostly) broken at one to three places."""
    value = draw(shaped(tp))
    return draw(mutated_json(value)) if draw(st.integers(0, 3)) else value


@st.composite
def hostile_stream(draw: st.DrawFn, provider: str) -> list[bytes]:
    """A stream of events drawn from the provider's declared event shape (some broken),
    framed as the provider frames them and delivered in arbitrary pieces."""
    from tests.support.fuzz_support import dumps

    spec = shapes(provider)
    events = draw(st.lists(hostile(spec.event), min_size=1, max_size=6))
    parts = []
    for event in events:
        data = dumps(event)
        if spec.stream == "ndjson":
            parts.append(data + b"\n")
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        name = (
            f"event: {kind}\n".encode(errors="backslashreplace")
            if spec.named and isinstance(kind, str)
            else b""
        )
        parts.append(name + b"data: " + data + b"\n\n")
    if provider in ("openai", "openrouter", "mistral") and draw(st.booleans()):
        parts.append(b"data: [DONE]\n\n")
    body = b"".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(body[start:cut])
        start = cut
    pieces.append(body[start:])
    return pieces


__all__ = ["Shapes", "hostile", "hostile_stream", "shaped", "shapes", "type_names"]
