# ruff: noqa: E501 -- the vector table below reads best one document to a line
"""Cross-language hash vectors: schema/vectors/hash.json, written by Python's metis.

`python -m codegen.hash_vectors` (re)writes the file; `--check` exits 1 when it differs from
what the runtime computes now. Each vector is a message document as JSON *text* (so `1.0`
and `1`, big integers and escapes reach every reader as written), the canonical JSON that
`metis.canonical.canonical_json(read_message(text))` gives it, and its SHA-256
(`message_hash`). Documents the runtime refuses carry `"refused": true` instead. The Python
suite (tests/schema/test_hash_vectors.py) and the TypeScript package's suite
(typescript/test/hash.test.mjs) both hold their language to every vector, so a message
written in one language hashes to the same identity in the other (spec §6.5).

A reader that gets a *parsed* document loses what JSON.parse loses (`1.0` is `1`, an
integer past 2**53 is rounded): where that changes the canonical JSON, the vector also
carries `canonical_parsed`, what Python computes for `JSON.stringify(JSON.parse(text))`.

Why a separate step and not part of `python -m codegen`: the vectors are computed by the
runtime, which imports the models codegen writes; this runs after codegen, on its output.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "schema" / "vectors" / "hash.json"

_TS = "2026-05-08T12:00:01.000001Z"
USER: dict[str, Any] = {
    "id": "01HZ0000000000000000000001",
    "session_id": "sess_42",
    "role": "user",
    "content": [{"type": "text", "text": "What's a ULID?"}],
    "metadata": {"status": "complete"},
    "created_at": _TS,
    "schema_version": 2,
}
ASSISTANT: dict[str, Any] = {
    "id": "01HZ0000000000000000000002",
    "session_id": "sess_42",
    "role": "assistant",
    "content": [{"type": "text", "text": "A ULID is a 128-bit identifier."}],
    "metadata": {
        "model": "anthropic:claude-sonnet-4-6",
        "provider": "anthropic",
        "routing": {
            "mode": "default",
            "chosen_model": "anthropic:claude-sonnet-4-6",
            "reason": "workspace default",
        },
        "usage": {
            "input_tokens": 8,
            "output_tokens": 42,
            "cost_usd": "0.000654",
            "pricing_version": "2026-05-08",
            "latency_ms": 820,
        },
        "status": "complete",
    },
    "created_at": "2026-05-08T12:00:02.000002Z",
    "schema_version": 2,
}
TOOL_USE_ID = "tu_01HZ0000000000000000000001"


def _doc(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = doc
        for key in parents:
            node = node[key]
        node[last] = value
    return doc


def _text(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def _tool_use(input_text: str) -> str:
    """An assistant message calling a tool with `input_text` (JSON text, spliced in as written)."""
    doc = _doc(ASSISTANT, content=[{"type": "tool_use", "id": TOOL_USE_ID, "name": "probe", "input": {}}])
    return _text(doc).replace('"input": {}', f'"input": {input_text}')


def _random_floats() -> str:
    rng = random.Random(20260508)
    values = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30) for _ in range(160)]
    values += [float(rng.randint(-(10**17), 10**17)) for _ in range(20)]
    values += [rng.choice([5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.2, 0.3])]
    return "[" + ", ".join(repr(v) for v in values) + "]"


def documents() -> list[tuple[str, str]]:
    """(description, document text) of every vector."""
    keys = {"z": 1, "a": 2, "B": 3, "é": 4, "\uff21": 5, "\U0001f600": 6, "\ue000": 7, "a\u0000": 8, "": 9}
    return [
        ("a minimal user message", _text(USER)),
        ("metadata {}: status filled in as complete (the schema default)", _text(_doc(USER, metadata={}))),
        (
            "explicit nulls in metadata are left out",
            _text(_doc(USER, metadata={"status": "complete", "model": None, "usage": None})),
        ),
        ("an assistant message: routing and usage defaults filled in", _text(ASSISTANT)),
        (
            "keys written in reverse order, and pretty-printed",
            json.dumps(dict(reversed(list(ASSISTANT.items()))), indent=4),
        ),
        (
            "non-ASCII, astral and escaped text: UTF-8 as is, only quote, backslash and controls escaped",
            _text(
                _doc(
                    USER,
                    content=[
                        {
                            "type": "text",
                            "text": 'héllo wörld — 日本語 😀 𝄞 "q" \\ / \n\t\r\b\f \u0000\u001f\u007f\u2028\u2029 \ufeff',
                        }
                    ],
                )
            ),
        ),
        (
            "\\u escapes in the text read as the characters they name",
            _text(USER).replace("What's a ULID?", "\\u00e9\\u65e5\\ud83d\\ude00\\u0041\\/"),
        ),
        (
            "keys sorted by code point, not UTF-16 unit (U+FF21 and U+E000 before U+1F600)",
            _tool_use(json.dumps(keys, ensure_ascii=False)),
        ),
        (
            "nested objects sorted at every level, arrays kept in order, nulls inside a tool input kept",
            _tool_use('{"outer": {"y": [3, 1, 2], "x": {"d": null, "c": [{"b": 1, "a": 2}]}}, "null": null}'),
        ),
        (
            "1.0 is a float, 1 an integer; -0.0 a float, -0 an integer; 1E2 a float",
            _tool_use('{"float": 1.0, "int": 1, "negzero": -0.0, "intzero": -0, "exp": 1E2, "half": 0.5}'),
        ),
        (
            "large and small floats as orjson writes them",
            _tool_use(
                '{"a": 1e16, "b": 1e15, "c": 1e-7, "d": 1e-5, "e": 1e-6, "f": 2.5e-5, "g": 1e21, "h": 1.5e300, "i": 5e-324, "j": 1.7976931348623157e308, "k": 123456789.123456789, "l": 12345678901234567.0, "m": 0.1, "n": -1e-7, "o": 1e-400}'
            ),
        ),
        (
            "integers beyond 2**53 and 2**64 stay exact",
            _tool_use(
                '{"safe": 9007199254740993, "u64": 18446744073709551615, "wide": 18446744073709551617, "negwide": -9223372036854775809, "huge": 123456789012345678901234567890123456789}'
            ),
        ),
        (
            "180 random doubles across 60 orders of magnitude",
            _tool_use('{"values": ' + _random_floats() + "}"),
        ),
        (
            "Decimal cost strings: leading zeros dropped, the fraction as written",
            _text(_doc(ASSISTANT, metadata__usage__cost_usd="00.000100")),
        ),
        (
            "a tiny decimal stays in fixed point",
            _text(_doc(ASSISTANT, metadata__usage__cost_usd="0.0000000001")),
        ),
        (
            "a long decimal keeps every digit",
            _text(
                _doc(
                    ASSISTANT,
                    metadata__usage__cost_usd="123456789012345678901234567890.000000000000000000000000000001",
                )
            ),
        ),
        ("created_at +00:00 is written Z", _text(_doc(USER, created_at="2026-05-08T12:00:01+00:00"))),
        ("created_at lowercase t and z", _text(_doc(USER, created_at="2026-05-08t12:00:01.25z"))),
        (
            "created_at with nanoseconds keeps microseconds",
            _text(_doc(USER, created_at="2026-05-08T12:00:01.123456789Z")),
        ),
        (
            "created_at with a zero fraction drops it",
            _text(_doc(USER, created_at="2026-05-08T12:00:01.000000Z")),
        ),
        ("created_at keeps a non-zero offset", _text(_doc(USER, created_at="2026-05-08T14:00:01.5+02:00"))),
        (
            "metadata.provider_raw is left out of the hash",
            _text(_doc(ASSISTANT, metadata__provider_raw={"id": "msg_01", "nested": {"n": 1.0}})),
        ),
        (
            "a number field (routing confidence) written 1 is the float 1.0",
            _text(_doc(ASSISTANT, metadata__routing__confidence=1)),
        ),
        ("a v1 message hashes as its v2 reading", _text(_doc(USER, schema_version=1))),
        (
            "block defaults: is_error, citations_enabled",
            _text(
                _doc(
                    USER,
                    content=[
                        {"type": "text", "text": "Read this."},
                        {
                            "type": "document",
                            "source": {"kind": "base64", "data": "JVBERi0xLjQK"},
                            "media_type": "application/pdf",
                        },
                    ],
                )
            ),
        ),
        (
            "a tool message: tool_result is_error filled in",
            _text(
                _doc(
                    USER,
                    role="tool",
                    content=[
                        {
                            "type": "tool_result",
                            "tool_use_id": TOOL_USE_ID,
                            "content": [{"type": "text", "text": "ok"}],
                        }
                    ],
                    metadata={"status": "complete", "parent_tool_use_id": TOOL_USE_ID},
                )
            ),
        ),
        (
            "refused: a float where the schema says integer",
            _text(_doc(ASSISTANT, metadata__usage__input_tokens=8.0)),
        ),
        ("refused: a lone surrogate", _text(USER).replace("What's a ULID?", "\\ud800")),
        ("refused: a schema version newer than the runtime's", _text(_doc(USER, schema_version=99))),
        ("refused: not a valid message (no content)", _text(_doc(USER, content=[]))),
    ]


def _js_parsed(value: Any) -> Any:
    """`value` (read exactly) as JSON.parse would hold it and JSON.stringify write it back:
    numbers are doubles, and a whole one below 1e21 is written as an integer."""
    if isinstance(value, dict):
        return {k: _js_parsed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_parsed(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    number = float(value)
    if number.is_integer() and abs(number) < 1e21:
        return int(Decimal(repr(number)))
    return number


def vector(description: str, text: str) -> dict[str, Any]:
    """One vector, computed by the runtime."""
    from metis import _json
    from metis.canonical import canonical_json, message_hash, read_message
    from metis.errors import MetisError

    out: dict[str, Any] = {"description": description, "document": text}
    try:
        message = read_message(text)
    except (MetisError, _json.JSONDecodeError):
        out["refused"] = True
        return out
    canonical = canonical_json(message).decode("utf-8")
    out["canonical"] = canonical
    out["sha256"] = message_hash(message)
    parsed = canonical_json(read_message(_json.write(_js_parsed(_json.loads(text))))).decode("utf-8")
    if parsed != canonical:
        out["canonical_parsed"] = parsed
    return out


def render() -> str:
    """The text of schema/vectors/hash.json."""
    vectors = [vector(description, text) for description, text in documents()]
    return json.dumps(vectors, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen.hash_vectors", description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the file differs from the runtime's"
    )
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else None
        if current != text:
            print(
                f"{TARGET.relative_to(REPO)} is stale: run `python -m codegen.hash_vectors`", file=sys.stderr
            )
            return 1
        print(f"{TARGET.relative_to(REPO)} matches the runtime")
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
