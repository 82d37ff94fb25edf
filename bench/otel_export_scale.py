"""`metis export --format otel` of one long session: time, peak memory, output size.

    python -m bench.otel_export_scale [--messages 100000] [--limit 60]

Builds a session of `--messages` messages (user question, assistant answer with usage,
alternating: one model call per two messages) in a SQLite store in a temporary directory,
then runs `metis export SESSION --format otel -o FILE` in a child process and reports its
wall time, its peak resident memory (the child's own maximum RSS, from wait4) and the
bytes it wrote. A run still going after `--limit` seconds is stopped and reported as cut
off, with the bytes written by then (issue 29: the export that repeated each call's whole
input in every record would have written about 500 GB for 100,000 messages).

Not part of `python -m bench` (not a `bench_*.py` module): one measurement, run by hand,
whose numbers go in the issue's closing note.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

SID = "sess_otel_scale"
MODEL = "anthropic:claude-sonnet-4-6"
USAGE = {
    "input_tokens": 1200,
    "output_tokens": 85,
    "cached_input_tokens": 900,
    "cost_usd": "0.004170",
    "pricing_version": "2026-05-08",
    "latency_ms": 812,
}
ROUTING = {"mode": "default", "chosen_model": MODEL, "reason": "workspace default"}
T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
CHUNK = 1_000


def build(path: Path, n: int) -> None:
    """A store at `path` holding session SID of `n` messages (see module doc)."""
    from metis.ids import new_message_id
    from metis.store import Store
    from metis_schema import CURRENT_VERSION
    from metis_schema.v3 import Message

    assistant = {"model": MODEL, "provider": "anthropic", "routing": ROUTING, "usage": USAGE}
    with Store.open(path, synchronous="NORMAL") as store:
        store.create_session("/bench", session_id=SID, title="otel export scale")
        batch: list[Message] = []
        for i in range(n):
            role, text, metadata = (
                ("user", f"Question {i}: what does section {i} of the README say?", {})
                if i % 2 == 0
                else ("assistant", f"Section {i} describes one part of Project Foo.", assistant)
            )
            batch.append(
                Message.model_validate(
                    {
                        "id": new_message_id(),
                        "session_id": SID,
                        "role": role,
                        "content": [{"type": "text", "text": text}],
                        "metadata": {**metadata, "stop_reason": "end_turn"} if metadata else {},
                        "created_at": T0 + timedelta(milliseconds=i + 1),
                        "schema_version": CURRENT_VERSION,
                    }
                )
            )
            if len(batch) == CHUNK:
                store.append_many(batch)
                batch = []
        if batch:
            store.append_many(batch)


def measure(db: Path, out: Path, limit: float) -> dict[str, object]:
    """Run the export in a child process; its time, peak RSS, output bytes, and whether it
    finished within `limit` seconds."""
    command = [sys.executable, "-c", "from metis.cli import main; main()"]
    command += ["--db", str(db), "export", SID, "--format", "otel", "-o", str(out)]
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    finished = True
    while True:  # wait4, not poll: the child's own peak RSS comes with its exit status
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > limit:
            child.kill()
            finished = False
            pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - started
    peak_kib = usage.ru_maxrss
    written = out.stat().st_size if out.exists() else 0
    partial = out.with_name(out.name + ".partial")
    if partial.exists():
        written = partial.stat().st_size
    return {
        "finished": finished,
        "exit": child.returncode if finished else f"killed after {limit:g}s",
        "seconds": round(elapsed, 2),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "output_mb": round(written / 1e6, 2),
        "stderr": (child.stderr.read().decode(errors="replace").strip() if child.stderr else "")[-300:],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before the export is stopped")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="metis-otel-scale-") as tmp:
        db, out = Path(tmp) / "store.sqlite3", Path(tmp) / "otel.jsonl"
        started = time.monotonic()
        build(db, args.messages)
        print(f"built {args.messages} messages in {time.monotonic() - started:.1f}s", flush=True)
        result = measure(db, out, args.limit)
    print(f"export --format otel of {args.messages} messages: {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
