"""Hostile values through the Python API give only MetisErrors (issue 29, item 11;
tests/support/fuzz_api.py): a lone surrogate, a NaN, an infinity or an integer past 4,300 digits
in a message, in request options, in a routing policy, and through `Session.send`, which
must refuse before anything is sent or stored. METIS_FUZZ_EXAMPLES raises the budget
(`python -m bench.fuzz` counts a long run)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from tests.support.fuzz_api import (
    hostile_message,
    hostile_options,
    hostile_policy,
    untyped_message,
    untyped_options,
    untyped_policy,
    untyped_send,
)
from tests.support.fuzz_support import fuzz_settings

EXAMPLES = int(os.environ.get("METIS_FUZZ_EXAMPLES", "60"))

TARGETS: list[tuple[str, Any, Callable[[Any], BaseException | None]]] = [
    ("message", hostile_message(), untyped_message),
    ("options", hostile_options(), untyped_options),
    ("policy", hostile_policy(), untyped_policy),
    ("send", hostile_options(), untyped_send),
]


@pytest.mark.parametrize(("strategy", "check"), [t[1:] for t in TARGETS], ids=[t[0] for t in TARGETS])
def test_hostile_python_values_give_only_metis_errors(
    strategy: Any, check: Callable[[Any], BaseException | None]
) -> None:
    @fuzz_settings(EXAMPLES)
    @given(strategy)
    def run(value: Any) -> None:
        found = check(value)
        assert found is None, f"{type(found).__name__}: {str(found)[:300]!r}"

    run()
