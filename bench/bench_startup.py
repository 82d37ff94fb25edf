"""Start-up of the `metis` command: `metis --help`, in fresh interpreters.

Every command pays this before it does anything, so `metis --help` must not import the
schema models, the adapters, the store or the HTTP client. Measured as the best of
several fresh `python -c` runs (the console script does exactly this import and call),
beside two floors from the same run: a bare interpreter, and one that imports click.
`python -m bench.bench_startup --importtime` prints `python -X importtime`'s heaviest
imports of `metis.cli` instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ._common import Row

ROUNDS = 15
TARGET_S = 0.15
HELP = "import sys; sys.argv = ['metis', '--help']; from metis.cli import main; main()"


def _best(code: str) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=os.environ.copy())
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list[Row]:
    bare = _best("pass")
    click = _best("import click")
    help_ = _best(HELP)
    return [
        Row(
            "startup",
            "metis --help (fresh interpreter)",
            help_,
            "s",
            floor=click,
            floor_name="python -c 'import click'",
            target=f"<= {TARGET_S} s",
            ok=help_ <= TARGET_S,
        ),
        Row("startup", "python -c pass", bare, "s"),
    ]


def importtime(top: int = 15) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the heaviest imports of `metis.cli`."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import metis.cli"],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    rows = []
    for line in out.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


if __name__ == "__main__":
    if "--importtime" in sys.argv:
        for micros, module in importtime():
            print(f"{micros / 1000:8.1f} ms  {module}")
    else:
        for row in run():
            floor = f" (floor {row.floor:.3f} s: {row.floor_name})" if row.floor else ""
            print(f"{row.name}: {row.value:.3f} {row.unit}{floor}")
