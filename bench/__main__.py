"""Run every bench/bench_*.py module's `run() -> list[Row]` and print one table."""

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
    table = Table(title="metis benchmarks (floors measured in this run, same data)")
    for column in ("area", "measurement", "value", "floor", "ratio", "target", "ok"):
        table.add_column(column)
    for row in rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
        floor = f"{row.floor:.3g} {row.unit} ({row.floor_name})" if row.floor is not None else ""
        ok = "" if row.ok is None else ("yes" if row.ok else "NO")
        table.add_row(row.area, row.name, f"{row.value:.3g} {row.unit}", floor, ratio, row.target or "", ok)
    Console(width=200).print(table)
    out = here / "results.json"
    out.write_text(json.dumps([r.as_dict() for r in rows], indent=2) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows; written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
