"""`metis serve` beside LiteLLM's proxy, in one run, on loopback, in front of the same
scripted upstream (`bench._gateway_upstream`: an OpenAI Chat Completions stand-in that
answers after a fixed 50 ms, whole or streamed).

Both proxies run with the same number of worker processes; each is sent the same
requests (`POST /v1/chat/completions`, model `gpt-4o`, one new user turn each) at
increasing rates, open loop (`bench._gateway_load`), the two taking turns at each rate,
with the load generator talking to the upstream directly as a third contender (the
floor: what the client and the upstream cost without a proxy). Per rate and proxy:

- added latency = client-observed latency (due -> last byte) - the upstream's 50 ms,
  p50 and p99;
- failures: anything but a 200 carrying the upstream's reply within 10 s;
- memory: the peak RSS of the proxy's processes (server and workers) during the step;
- records: for metis, the assistant rows its store gained against the requests it
  answered (every answered request must be stored); LiteLLM's proxy, run as its docs
  describe without a database, stores nothing (no spend logs without Prisma/PostgreSQL),
  which the table says rather than counting.

A proxy *sustains* a rate when the step has 0 failures, 0 lost records and a p99 added
latency under `SLO_MS` (a proxy that cannot keep up queues, and its p99 climbs until
requests time out). Its ladder stops at the first rate it does not sustain.

Targets (issue 28): lower added latency than LiteLLM's proxy at every rate both sustain,
and at least twice the highest rate LiteLLM sustains.

Knobs (environment): METIS_BENCH_ROUNDS (default 3; medians over rounds are reported),
METIS_BENCH_GATEWAY_WORKERS (default "1"; e.g. "1,2"), METIS_BENCH_GATEWAY_MODES
(default "whole,stream"), METIS_BENCH_GATEWAY_RATES (requests/s, comma-separated),
METIS_BENCH_GATEWAY_SECONDS (per step, default 3). `python -m bench.bench_gateway`
prints the full per-rate table in Markdown (what bench/README.md shows).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._common import Row
from ._gateway_load import Step, run_step
from ._gateway_upstream import REPLY_TEXT

AREA = "gateway"
LATENCY_MS = 50.0
"""The upstream's fixed latency, subtracted from what the client sees."""
SLO_MS = 500.0
"""p99 added latency above which a rate counts as not sustained."""
RATES = (10, 20, 30, 40, 60, 80, 100, 120, 160, 200, 250, 300, 400, 600, 800, 1200)
PATH = "/v1/chat/completions"
ROOT = Path(__file__).resolve().parent.parent


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"METIS_BENCH_{name}") or default


@dataclass
class Result:
    """One proxy at one rate in one round."""

    proxy: str
    mode: str
    workers: int
    rate: float
    round: int
    p50_ms: float
    p99_ms: float
    answered: int
    failed: int
    failures: dict[str, int]
    peak_rss_mb: float
    stored: int | None
    """Assistant rows stored for this step's requests (metis), None for a proxy that stores none."""

    @property
    def lost(self) -> int:
        return 0 if self.stored is None else max(0, self.answered - self.stored)

    @property
    def sustained(self) -> bool:
        return self.failed == 0 and self.lost == 0 and self.p99_ms < SLO_MS


@dataclass
class Proxy:
    """A contender the load generator sends to: a proxy process (or the upstream itself)."""

    name: str
    port: int
    headers: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    db: Path | None = None
    log: Path | None = None

    def rss_mb(self) -> float:
        """RSS of the process and all its children (uvicorn's workers), in MB."""
        if self.process is None:
            return 0.0
        import psutil

        try:
            root = psutil.Process(self.process.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0.0
        total = 0
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
        return total / 1e6

    def stored(self) -> int | None:
        """Assistant messages in the metis store (None for LiteLLM and the direct floor)."""
        if self.db is None:
            return None
        if not self.db.exists():
            return 0
        with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)) as conn:
            return int(conn.execute("SELECT count(*) FROM messages WHERE role = 'assistant'").fetchone()[0])

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            cmd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            start_new_session=True,
        )


def start_metis(upstream: int, workers: int, tmp: Path) -> Proxy:
    """`metis --db STORE serve --workers N`, its OpenAI provider pointed at the upstream."""
    port = _free_port()
    db = tmp / f"metis-{workers}w.sqlite3"
    env = {
        **os.environ,
        "METIS_HOME": str(tmp / "metis-home"),
        "METIS_OPENAI_BASE_URL": f"http://127.0.0.1:{upstream}/v1",
        "OPENAI_API_KEY": "bench-no-key",
    }
    cmd = [sys.executable, "-c", "from metis.cli import main; main()", "--db", str(db), "serve"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]
    log = tmp / f"metis-{workers}w.log"
    return Proxy("metis", port, process=_spawn(cmd, env, log, tmp), db=db, log=log)


def litellm_command() -> str | None:
    """LiteLLM's proxy CLI in this interpreter's environment (the bench's own), if installed."""
    beside = Path(sys.executable).parent / "litellm"
    return str(beside) if beside.exists() else shutil.which("litellm")


def start_litellm(upstream: int, workers: int, tmp: Path, command: str) -> Proxy:
    """`litellm --config` with one `openai/gpt-4o` deployment at the upstream; no database
    (no Prisma, so no spend logs), logging at ERROR (no access log), a master key (the
    proxy refuses to start without one)."""
    port = _free_port()
    key = "sk-" + secrets.token_hex(32)
    config = tmp / "litellm.yaml"
    config.write_text(
        json.dumps(  # YAML is a superset of JSON
            {
                "model_list": [
                    {
                        "model_name": "gpt-4o",
                        "litellm_params": {
                            "model": "openai/gpt-4o",
                            "api_base": f"http://127.0.0.1:{upstream}/v1",
                            "api_key": "bench-no-key",
                        },
                    }
                ],
                "general_settings": {"master_key": key},
                "litellm_settings": {"set_verbose": False, "telemetry": False},
            }
        ),
        encoding="utf-8",
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
    cmd = [command, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--num_workers", str(workers)]
    log = tmp / f"litellm-{workers}w.log"
    headers = {"authorization": f"Bearer {key}"}
    return Proxy("litellm", port, headers=headers, process=_spawn(cmd, env, log, tmp), log=log)


class Bodies:
    """Request bodies: each a new conversation with its own user text (a proxy that
    recognizes continuations must not take one request for another's)."""

    def __init__(self) -> None:
        self.next = 0

    def maker(self, mode: str) -> Callable[[int], bytes]:
        base = self.next
        self.next += 1_000_000
        extra = ',"stream":true,"stream_options":{"include_usage":true}' if mode == "stream" else ""

        def body(i: int) -> bytes:
            text = f"Bench request {base + i}: answer with the fixed words."
            return (
                f'{{"model":"gpt-4o","max_tokens":64,"messages":[{{"role":"user","content":"{text}"}}]{extra}}}'
            ).encode()

        return body


def _expect(mode: str) -> bytes:
    return b"[DONE]" if mode == "stream" else REPLY_TEXT.encode()


async def _ready(proxy: Proxy, bodies: Bodies, within: float = 180.0) -> None:
    """Wait until the proxy answers, then warm it up (first requests import and connect)."""
    deadline = time.monotonic() + within
    while True:
        if proxy.process is not None and proxy.process.poll() is not None:
            raise RuntimeError(f"{proxy.name} exited: {_tail(proxy.log)}")
        with contextlib.suppress(OSError):
            step = await run_step(
                proxy.port,
                PATH,
                proxy.headers,
                bodies.maker("whole"),
                _expect("whole"),
                rate=1,
                seconds=1,
                timeout=10,
            )
            if step.failed == 0:
                break
        if time.monotonic() > deadline:
            raise RuntimeError(f"{proxy.name} did not answer within {within:.0f} s: {_tail(proxy.log)}")
        await asyncio.sleep(0.5)
    for mode in ("whole", "stream"):
        await run_step(proxy.port, PATH, proxy.headers, bodies.maker(mode), _expect(mode), rate=20, seconds=2)


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return log.read_text(errors="replace")[-2000:]


async def _measure(
    proxy: Proxy, mode: str, rate: float, seconds: float, bodies: Bodies
) -> tuple[Step, float, int | None]:
    """One step against `proxy`: the load generator's view, the peak RSS, rows stored."""
    before = proxy.stored()
    peak = proxy.rss_mb()
    done = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, proxy.rss_mb())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.25)

    sampler = asyncio.ensure_future(sample())
    step = await run_step(
        proxy.port, PATH, proxy.headers, bodies.maker(mode), _expect(mode), rate=rate, seconds=seconds
    )
    done.set()
    await sampler
    stored = None
    if before is not None:
        # The reply goes out before (or while) its record is written: give the writes a moment.
        deadline = time.monotonic() + 10
        while True:
            stored = (proxy.stored() or 0) - before
            if stored >= len(step.latencies) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.2)
    return step, peak, stored


def _result(
    proxy: Proxy, step: Step, *, mode: str, workers: int, rnd: int, peak: float, stored: int | None
) -> Result:
    return Result(
        proxy=proxy.name,
        mode=mode,
        workers=workers,
        rate=step.rate,
        round=rnd,
        p50_ms=step.percentile(50) * 1000 - LATENCY_MS,
        p99_ms=step.percentile(99) * 1000 - LATENCY_MS,
        answered=len(step.latencies),
        failed=step.failed,
        failures=dict(step.failures),
        peak_rss_mb=peak,
        stored=stored,
    )


async def _ladder(
    proxies: list[Proxy],
    bodies: Bodies,
    *,
    mode: str,
    workers: int,
    rnd: int,
    rates: tuple[float, ...],
    seconds: float,
) -> list[Result]:
    """Every proxy at each rate in turn (order alternating by round), each until it fails."""
    out: list[Result] = []
    alive = [p for p in proxies if p.name != "direct"]
    floor = [p for p in proxies if p.name == "direct"]
    for rate in rates:
        if not alive:
            break
        order = [*alive, *floor]
        if rnd % 2:
            order.reverse()
        for proxy in order:
            step, peak, stored = await _measure(proxy, mode, rate, seconds, bodies)
            result = _result(proxy, step, mode=mode, workers=workers, rnd=rnd, peak=peak, stored=stored)
            out.append(result)
            _say(result)
            if proxy in alive and not result.sustained:
                alive.remove(proxy)
            await asyncio.sleep(0.5)
    return out


def _say(r: Result) -> None:
    stored = "" if r.stored is None else f" stored {r.stored}/{r.answered}"
    fails = f" failed {r.failed} {r.failures}" if r.failed else ""
    print(
        f"  [{r.workers}w {r.mode} round {r.round}] {r.proxy:8} {r.rate:6.0f}/s  added p50 {r.p50_ms:8.2f} ms"
        f"  p99 {r.p99_ms:8.2f} ms  rss {r.peak_rss_mb:6.0f} MB{stored}{fails}"
        f"{'' if r.sustained else '  NOT SUSTAINED'}",
        file=sys.stderr,
        flush=True,
    )


@contextlib.contextmanager
def _upstream() -> Iterator[int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "bench._gateway_upstream", str(LATENCY_MS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        yield int(process.stdout.readline())
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def measure() -> tuple[list[Result], str | None]:
    """Run the whole comparison; (every step's result, why LiteLLM is missing if it is)."""
    rounds = int(_setting("ROUNDS", "3"))
    workers_list = [int(w) for w in _setting("GATEWAY_WORKERS", "1").split(",")]
    modes = _setting("GATEWAY_MODES", "whole,stream").split(",")
    rates = tuple(float(r) for r in _setting("GATEWAY_RATES", ",".join(map(str, RATES))).split(","))
    seconds = float(_setting("GATEWAY_SECONDS", "3"))
    command = litellm_command()
    missing = (
        None if command else "LiteLLM's proxy is not installed in this environment (see bench/peers.txt)"
    )
    results: list[Result] = []
    bodies = Bodies()
    try:
        import uvloop

        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with (
        _upstream() as upstream,
        tempfile.TemporaryDirectory(prefix="metis-bench-gw-") as tmpdir,
        asyncio.Runner(loop_factory=loop_factory) as runner,
    ):
        tmp = Path(tmpdir)
        for workers in workers_list:
            proxies = [Proxy("direct", upstream)]
            try:
                proxies.append(start_metis(upstream, workers, tmp))
                if command:
                    litellm = start_litellm(upstream, workers, tmp, command)
                    try:
                        runner.run(_ready(litellm, bodies))
                        proxies.append(litellm)
                    except RuntimeError as exc:
                        missing = f"LiteLLM's proxy did not start: {exc}"
                        litellm.stop()
                for proxy in proxies:
                    runner.run(_ready(proxy, bodies))
                for rnd in range(rounds):
                    for mode in modes:
                        results += runner.run(
                            _ladder(
                                proxies,
                                bodies,
                                mode=mode,
                                workers=workers,
                                rnd=rnd,
                                rates=rates,
                                seconds=seconds,
                            )
                        )
            finally:
                for proxy in proxies:
                    proxy.stop()
    return results, missing


# --- reporting --------------------------------------------------------------------------------


def _groups(results: list[Result]) -> dict[tuple[int, str], list[Result]]:
    out: dict[tuple[int, str], list[Result]] = {}
    for r in results:
        out.setdefault((r.workers, r.mode), []).append(r)
    return out


def _at(results: list[Result], proxy: str, rate: float) -> list[Result]:
    return [r for r in results if r.proxy == proxy and r.rate == rate]


def _held(results: list[Result], proxy: str, rate: float, rounds: int) -> bool:
    """Sustained in more than half of the rounds."""
    return sum(r.sustained for r in _at(results, proxy, rate)) * 2 > rounds


def _max_rate(results: list[Result], proxy: str) -> tuple[float, bool]:
    """Median over rounds of the highest rate the proxy sustained (0 if none), and whether
    that is the ladder's top in every round (then it is only a lower bound)."""
    per_round = []
    capped = True
    for rnd in sorted({r.round for r in results}):
        mine = [r for r in results if r.proxy == proxy and r.round == rnd]
        if not mine:
            continue
        held = [r.rate for r in mine if r.sustained]
        per_round.append(max(held, default=0.0))
        capped = capped and all(r.sustained for r in mine)
    return (statistics.median(per_round) if per_round else 0.0), capped


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rows(results: list[Result], missing: str | None) -> list[Row]:
    out: list[Row] = []
    for (workers, mode), group in sorted(_groups(results).items()):
        rounds = len({r.round for r in group})
        tag = f"{mode}, {workers} worker{'s' if workers > 1 else ''}"
        rates = sorted({r.rate for r in group})
        for rate in rates:
            if not (_held(group, "metis", rate, rounds) and _held(group, "litellm", rate, rounds)):
                continue
            for q in ("p50", "p99"):
                mine = _median([getattr(r, f"{q}_ms") for r in _at(group, "metis", rate) if r.sustained])
                theirs = _median([getattr(r, f"{q}_ms") for r in _at(group, "litellm", rate) if r.sustained])
                direct = _median([getattr(r, f"{q}_ms") for r in _at(group, "direct", rate)])
                out.append(
                    Row(
                        AREA,
                        f"added latency {q} at {rate:.0f}/s ({tag})",
                        mine,
                        "ms",
                        floor=theirs,
                        floor_name="LiteLLM proxy",
                        target="< 1 (lower than LiteLLM)",
                        ok=mine < theirs,
                        detail=f"no proxy: {direct:.2f} ms",
                    )
                )
        metis_max, metis_capped = _max_rate(group, "metis")
        litellm_max, _ = _max_rate(group, "litellm")
        stored = sum(r.stored or 0 for r in group if r.proxy == "metis")
        answered = sum(r.answered for r in group if r.proxy == "metis")
        if missing is None:
            out.append(
                Row(
                    AREA,
                    f"highest rate sustained ({tag})",
                    metis_max,
                    "req/s",
                    floor=litellm_max,
                    floor_name="LiteLLM proxy",
                    target=">= 2 (twice LiteLLM's)",
                    # LiteLLM holding no rate at all: its rate is under the lowest rung.
                    ok=metis_max >= 2 * (litellm_max or rates[0]),
                    detail=("the ladder's top: a lower bound; " if metis_capped else "")
                    + ("LiteLLM held no rate; " if litellm_max == 0 else "")
                    + f"0 failures, 0 lost records, p99 added < {SLO_MS:.0f} ms",
                )
            )
            peak_m = _median(
                [
                    max(r.peak_rss_mb for r in group if r.proxy == "metis" and r.round == k)
                    for k in range(rounds)
                ]
            )
            peak_l = _median(
                [
                    max(r.peak_rss_mb for r in group if r.proxy == "litellm" and r.round == k)
                    for k in range(rounds)
                ]
            )
            out.append(
                Row(
                    AREA,
                    f"peak RSS over the ladder ({tag})",
                    peak_m,
                    "MB",
                    floor=peak_l,
                    floor_name="LiteLLM proxy",
                )
            )
        else:
            out.append(Row(AREA, f"highest rate sustained ({tag})", metis_max, "req/s", detail=missing))
        out.append(
            Row(
                AREA,
                f"records stored / requests answered ({tag})",
                stored,
                "rows",
                floor=answered,
                floor_name="answered",
                target="= 1",
                ok=stored >= answered,
                detail="LiteLLM without a database stores no record",
            )
        )
    return out


def markdown(results: list[Result], missing: str | None) -> str:
    """The per-rate table: medians over rounds of each proxy's step at each rate."""
    lines = []
    for (workers, mode), group in sorted(_groups(results).items()):
        rounds = len({r.round for r in group})
        lines.append(
            f"\n**{mode}, {workers} worker{'s' if workers > 1 else ''}** ({rounds} rounds; medians)\n"
        )
        lines.append(
            "| rate (req/s) | proxy | added p50 (ms) | added p99 (ms) | failures | peak RSS (MB) "
            "| stored / answered | sustained |"
        )
        lines.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for rate in sorted({r.rate for r in group}):
            for proxy in ("metis", "litellm", "direct"):
                runs = _at(group, proxy, rate)
                if not runs:
                    continue
                stored = (
                    "no records"
                    if proxy == "litellm"
                    else "–"
                    if proxy == "direct"
                    else f"{sum(r.stored or 0 for r in runs)} / {sum(r.answered for r in runs)}"
                )
                held = sum(r.sustained for r in runs)
                lines.append(
                    f"| {rate:.0f} | {'no proxy (floor)' if proxy == 'direct' else proxy} "
                    f"| {_median([r.p50_ms for r in runs]):.2f} | {_median([r.p99_ms for r in runs]):.2f} "
                    f"| {sum(r.failed for r in runs)} | {_median([r.peak_rss_mb for r in runs]):.0f} "
                    f"| {stored} "
                    f"| {'–' if proxy == 'direct' else f'{held}/{len(runs)} rounds'} |"
                )
    if missing:
        lines.append(f"\n{missing}")
    return "\n".join(lines)


def run() -> list[Row]:
    load = os.getloadavg()
    print(
        f"gateway bench: load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs",
        file=sys.stderr,
    )
    results, missing = measure()
    after = os.getloadavg()
    table = markdown(results, missing)
    print(table)
    print(f"load average before {load[0]:.2f}, after {after[0]:.2f} (1 min); {os.cpu_count()} CPUs")
    out = Path(__file__).parent / "gateway-results.json"
    out.write_text(
        json.dumps(
            {"load": [load, after], "missing": missing, "results": [r.__dict__ for r in results]}, indent=1
        )
        + "\n",
        encoding="utf-8",
    )
    return rows(results, missing)


if __name__ == "__main__":
    for row in run():
        print(row.as_dict())
