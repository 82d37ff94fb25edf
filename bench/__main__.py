"""Run every bench/bench_*.py module's `run() -> list[Row]` and print one table.

`python -m bench peers` (or `store`) runs one area; ratios are metis's value over the
other's (for times: below 1, metis is faster)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ._common import Row


def main(argv: list[str]) -> int:
    only = set(argv)
    here = Path(__file__).parent
    rows: list[Row] = []
    for path in sorted(here.glob("bench_*.py")):
        area = path.stem.removeprefix("bench_")
        if only and area not in only:
            continue
        module = importlib.import_module(f"bench.{path.stem}")
        rows.extend(module.run())
    table = Table(title="metis benchmarks (every comparison measured in this run, on the same data)")
    for column in ("area", "measurement", "metis", "against", "ratio", "target", "ok", "detail"):
        table.add_column(column)
    for row in rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
        against = f"{row.floor:.3g} {row.unit} ({row.floor_name})" if row.floor is not None else ""
        ok = "" if row.ok is None else ("yes" if row.ok else "NO")
        value = f"{row.value:.3g} {row.unit}"
        table.add_row(row.area, row.name, value, against, ratio, row.target or "", ok, row.detail or "")
    Console(width=200).print(table)
    out = here / "results.json"
    out.write_text(json.dumps([r.as_dict() for r in rows], indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows; written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
