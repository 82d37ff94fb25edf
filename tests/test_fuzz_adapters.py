"""Hostile provider input: only MetisErrors escape the adapters (issue 17, item 4).

Recorded bodies and streams of every provider, mutated (tests/fuzz_support.py), go
through the operation that reads them: from_wire_response, the stream decoder and
assembler, from_wire_request, parse_error. Anything but a MetisError is a finding. The
budget keeps the whole suite near half a minute; METIS_FUZZ_EXAMPLES raises it for a
longer hunt."""

from __future__ import annotations

import os

import pytest
from fuzz_support import KINDS, PROVIDERS, mutated_json, mutated_stream, parsed, seeds, untyped
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("METIS_FUZZ_EXAMPLES", "250"))
CASES = [(provider, kind) for provider in PROVIDERS for kind in KINDS if seeds(provider, kind)]


@pytest.mark.parametrize(("provider", "kind"), CASES, ids=[f"{p}-{k}" for p, k in CASES])
def test_only_metis_errors_escape(provider: str, kind: str) -> None:
    pool = seeds(provider, kind)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
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
