"""Where the tests' data lives, named once: test modules sit one folder down (tests/<layer>/),
so none of them builds a data path from its own `__file__`."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
GOLDEN = TESTS / "golden"  # per provider: wire inputs and their `*.golden.*` outputs
FIXTURES = TESTS / "fixtures"  # recordings, costs, a v1 store file, a schema tree with v2
CASSETTES = TESTS / "cassettes"  # vcrpy cassettes replayed by the client tests
