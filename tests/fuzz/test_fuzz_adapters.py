"""Hostile provider input: only MetisErrors escape the adapters (issue 17, item 4).

Recorded bodies and streams of every provider, mutated (tests/support/fuzz_support.py), go
through the operation that reads them: from_wire_response, the stream decoder and
assembler, from_wire_request, parse_error. Anything but a MetisError is a finding. The
budget keeps the whole suite near half a minute; METIS_FUZZ_EXAMPLES raises it for a
longer hunt."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fuzz_support import (
    KINDS,
    PROVIDERS,
    fuzz_settings,
    mutated_json,
    mutated_stream,
    parsed,
    seeds,
    untyped,
)
from tests.support.wire_shapes import hostile, hostile_stream, shapes

EXAMPLES = int(os.environ.get("METIS_FUZZ_EXAMPLES", "250"))
CASES = [(provider, kind) for provider in PROVIDERS for kind in KINDS if seeds(provider, kind)]


@pytest.mark.parametrize(("provider", "kind"), CASES, ids=[f"{p}-{k}" for p, k in CASES])
def test_only_metis_errors_escape(provider: str, kind: str) -> None:
    pool = seeds(provider, kind)

    @fuzz_settings(EXAMPLES)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        seed = data.draw(st.sampled_from(pool), label="seed")
        if kind == "stream":
            wire = data.draw(mutated_stream(seed))
        else:
            wire = data.draw(mutated_json(parsed(seed.data)))
        found = untyped(provider, kind, wire)
        assert found is None, f"{seed.name}: untyped {type(found).__name__}: {str(found)[:300]}"

    check()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_recorded_input_is_read_without_an_untyped_error(provider: str) -> None:
    """The unmutated seeds themselves (the suite's baseline: each kind's seeds are found)."""
    for kind in KINDS:
        for seed in seeds(provider, kind):
            wire = [seed.data] if kind == "stream" else parsed(seed.data)
            assert untyped(provider, kind, wire) is None, seed.name


SHAPE_EXAMPLES = int(os.environ.get("METIS_FUZZ_SHAPE_EXAMPLES", "25"))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_inputs_drawn_from_the_declared_wire_shapes_give_only_metis_errors(provider: str, kind: str) -> None:
    """Bodies and streams built from the adapter's own wire TypedDicts (tests/support/wire_shapes.py),
    plausible enough to pass the first checks, broken at random fields."""
    spec = shapes(provider)
    strategy = hostile_stream(provider) if kind == "stream" else hostile(getattr(spec, kind))

    @fuzz_settings(SHAPE_EXAMPLES)
    @given(strategy)
    def check(wire: object) -> None:
        found = untyped(provider, kind, wire)
        assert found is None, f"untyped {type(found).__name__}: {str(found)[:300]}"

    check()


FOUND = [
    # a model name with a line break in an imported body (the catalog's entry check raised)
    ("mistral", "request", {"model": "m\nx", "messages": []}),
    ("responses", "request", {"model": "gpt\n5", "input": "hi"}),
    # an Anthropic stream error with an empty type (the canonical event needs a code)
    ("anthropic", "stream", [b'event: error\ndata: {"type":"error","error":{"type":"","message":""}}\n\n']),
    # a Responses item whose type is not a string (the item discriminator hashed it)
    ("responses", "response", {"id": "r", "status": "completed", "output": [{"type": [0]}]}),
    # a url_citation annotation with a title of the wrong type
    (
        "responses",
        "response",
        {
            "id": "r",
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": "t",
                            "annotations": [{"type": "url_citation", "url": "https://x", "title": 12345}],
                        }
                    ],
                }
            ],
        },
    ),
]


@pytest.mark.parametrize(
    ("provider", "kind", "wire"), FOUND, ids=[f"{p}-{k}-{i}" for i, (p, k, _) in enumerate(FOUND)]
)
def test_what_the_shape_fuzzer_found_is_a_metis_error(provider: str, kind: str, wire: object) -> None:
    assert untyped(provider, kind, wire) is None
