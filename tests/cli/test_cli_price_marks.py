"""The CLI's tables read the pricing_version marks `metis.pricing` records: one definition."""

from __future__ import annotations

import ast

from metis._price_marks import NO_USAGE, UNPRICED
from metis.builders import message
from metis.catalog import load_catalog
from metis.cli._tables import Totals, cost_text, price_rows, reply_cost
from metis.pricing import make_usage
from metis.usage import TokenCounts

from tests.support.paths import REPO


def test_what_pricing_records_unpriced_the_tables_show_as_unpriced() -> None:
    unpriced = make_usage(TokenCounts(input_tokens=5, output_tokens=7), pricing_key=UNPRICED, latency_ms=0)
    assert unpriced.pricing_version == UNPRICED
    assert reply_cost(unpriced) == "unpriced"
    reply = message("assistant", "hi", metadata={"model": "nobody:prices-this", "usage": unpriced})
    totals = Totals.of([reply, reply])
    assert (totals.with_usage, totals.unpriced) == (2, 2)
    assert cost_text(totals) == "unpriced"


def test_what_pricing_records_as_no_usage_the_price_table_leaves_unpriced() -> None:
    nothing = make_usage(TokenCounts(), pricing_key="openai:gpt-4o", latency_ms=0)
    assert nothing.pricing_version == NO_USAGE
    reply = message("assistant", "hi", metadata={"model": "openai:gpt-4o", "usage": nothing})
    rows = price_rows([reply], load_catalog())
    assert [line[1] for line in rows.lines] == ["total"]
    assert "1 reply with no usage recorded: not priced" in rows.notes
    assert Totals.of([reply]).unpriced == 0


def test_each_pricing_mark_is_defined_once() -> None:
    """`unpriced` and `no-usage` are assigned to a name in one module only (they were in
    two, pricing.py and cli/_tables.py, free to drift apart)."""
    found: dict[str, list[str]] = {UNPRICED: [], NO_USAGE: []}
    for path in sorted((REPO / "runtime" / "metis").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = getattr(node, "value", None) if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if isinstance(value, ast.Constant) and value.value in found:
                found[value.value].append(path.relative_to(REPO).as_posix())
    assert found == {UNPRICED: ["runtime/metis/_price_marks.py"], NO_USAGE: ["runtime/metis/_price_marks.py"]}
