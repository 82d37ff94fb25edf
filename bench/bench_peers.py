"""metis side by side with the libraries a user would otherwise pick: LiteLLM, Pydantic AI and
LangChain (pinned in bench/peers.txt), each doing the same job on the same data
(`bench._chat`), its output checked (turns and blocks) before anything is timed, the systems
timed in turns round by round (`per_call`). Every ratio is metis's time over the peer's:
below 1, metis is faster.

- canonical conversation -> Anthropic request body, N = 100 and 1,000 messages: metis
  `to_wire` against Pydantic AI `AnthropicModel._map_message` and LiteLLM
  `anthropic_messages_pt`; target: metis at least 2x faster than the fastest (<= 0.50);
- OpenAI request body -> Anthropic request body (what `metis convert` does) against LiteLLM
  `AnthropicConfig` (`map_openai_params` + `transform_request`); target: at least as fast.
  Twice: the body naming gpt-4o (genai-prices prices it), and the same body sent through
  OpenRouter naming deepseek/deepseek-v3 (only metis's local table prices it): an import
  prices no turn (they carry no usage), so the two must cost the same;
- Anthropic reply bytes -> one message with its usage (metis's also priced) against
  LangChain, Pydantic AI and LiteLLM (see `bench._peers`); target: 4x faster than the
  fastest (<= 0.25);
- a stored 10,000-message session -> canonical models (`Store.load_session`) against
  Pydantic AI `ModelMessagesTypeAdapter.validate_json` of the same conversation; target:
  no slower;
- linearity: the three rows that grow with the conversation, for every system, in µs per
  message at N = 500, 2,000, 8,000 and 32,000, every size timed in the same rounds. A row
  misses the target when its per-message time at 32,000 is over twice that at 500 (quadratic
  work would show as 64 times), and is named NOT LINEAR when it still grows over the last
  step, STEPS UP when it held there (see STILL).

METIS_BENCH_ROUNDS sets the rounds of each comparison (default 7; the linearity rows take
at most 3).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import ExitStack

from bench._chat import (
    LOCAL_MODEL,
    REPLY,
    REPLY_BLOCKS,
    REPLY_TOOL_CALLS,
    anthropic_shape,
    openai_messages,
    openai_request,
)
from bench._common import Row, per_call
from bench._contender import Contender, ReplyShape

AREA = "vs peers"
SIZES = (100, 1_000)
LOAD_N = 10_000
GROWTH = (500, 2_000, 8_000, 32_000)
LINEAR = 2.0
"""Per-message time at the largest N over the smallest above which a row is not linear."""
STILL = 1.5
"""Per-message growth over the last step (4x the messages) above which a row that is not
linear is still growing at the top (superlinear work: NOT LINEAR); at or below it, its
per-message time stepped up once and then held (STEPS UP: the data outgrew the CPU caches,
or a cost that appears only past some size). Both miss the target; the name says which."""


def _rounds() -> tuple[int, int]:
    rounds = int(os.environ.get("METIS_BENCH_ROUNDS") or 7)
    return rounds, min(rounds, 3)


def _to_anthropic(n: int, _: ExitStack) -> list[Contender]:
    from bench import _metis, _peers

    expected = anthropic_shape(openai_messages(n))
    contenders = [_metis.to_anthropic(n), _peers.pydantic_ai_to_anthropic(n), _peers.litellm_to_anthropic(n)]
    return [c.checked(expected) for c in contenders]


def _convert(n: int, _: ExitStack) -> list[Contender]:
    from bench import _metis, _peers

    body = openai_request(n)
    expected = anthropic_shape(body["messages"])
    return [c.checked(expected) for c in (_metis.convert(body), _peers.litellm_convert(body))]


def _convert_local(n: int, _: ExitStack) -> list[Contender]:
    """`_convert` of the body naming a local-table model, read as OpenRouter's (LiteLLM's
    transform is the same call whatever the source model)."""
    from bench import _metis, _peers

    body = openai_request(n, LOCAL_MODEL)
    expected = anthropic_shape(body["messages"])
    return [c.checked(expected) for c in (_metis.convert(body, "openrouter"), _peers.litellm_convert(body))]


def _load(n: int, stack: ExitStack) -> list[Contender]:
    """metis's store and Pydantic AI reading back the `n`-message session (the store's
    file lives until `stack` closes)."""
    from bench import _metis, _peers

    session = _metis.StoredSession(n)
    stack.callback(session.close)
    history = _peers.pydantic_ai_messages(openai_messages(n))
    return [session.load().checked(n), _peers.pydantic_ai_load(history).checked(len(history))]


Job = Callable[[int, ExitStack], list[Contender]]


def _timed(contenders: dict[str, Contender], rounds: int) -> dict[str, float]:
    print(f"  timing {' | '.join(contenders)}", file=sys.stderr, flush=True)
    return per_call(
        {key: c.run for key, c in contenders.items()}, rounds, {k: c.first for k, c in contenders.items()}
    )


def _compared(job: Job, n: int, rounds: int) -> dict[str, float]:
    """Seconds per call of each system doing `job` at size `n`, metis first."""
    with ExitStack() as stack:
        return _timed({c.system: c for c in job(n, stack)}, rounds)


def _against(name: str, seconds: dict[str, float], *, scale: float, unit: str, target: float) -> list[Row]:
    """One row per peer: metis's time (the first entry) beside the peer's, `scale` turning
    seconds into `unit`; the target (metis over peer at most `target`) is judged against
    the fastest peer only, on its row."""
    (_, mine), *peers = seconds.items()
    fastest = min(time for _, time in peers)
    rows = []
    for peer, time in peers:
        judged = time == fastest
        rows.append(
            Row(
                AREA,
                name,
                mine * scale,
                unit,
                time * scale,
                peer,
                f"<= {target:.2f}x the fastest peer" if judged else None,
                mine <= target * time if judged else None,
            )
        )
    return rows


def _comparison_rows(rounds: int) -> list[Row]:
    from bench import _metis, _peers

    rows: list[Row] = []
    for n in SIZES:
        seconds = _compared(_to_anthropic, n, rounds)
        rows += _against(
            f"canonical -> Anthropic body, N={n:,}", seconds, scale=1e6 / n, unit="µs/msg", target=0.5
        )
    for n in SIZES:
        seconds = _compared(_convert, n, rounds)
        rows += _against(
            f"OpenAI body (gpt-4o) -> Anthropic body, N={n:,}",
            seconds,
            scale=1e6 / n,
            unit="µs/msg",
            target=1.0,
        )
    for n in SIZES:
        seconds = _compared(_convert_local, n, rounds)
        rows += _against(
            f"OpenRouter body ({LOCAL_MODEL}, local table) -> Anthropic body, N={n:,}",
            seconds,
            scale=1e6 / n,
            unit="µs/msg",
            target=1.0,
        )
    expected = ReplyShape(REPLY_BLOCKS, REPLY_TOOL_CALLS, REPLY["usage"]["output_tokens"])
    replies = [_metis.reply()] + [peer() for peer in _peers.REPLY_PEERS]
    seconds = _timed({c.system: c.checked(expected) for c in replies}, rounds)
    rows += _against(
        "Anthropic reply bytes (claude-sonnet-4-5) -> message + usage",
        seconds,
        scale=1e6,
        unit="µs",
        target=0.25,
    )
    seconds = _compared(_load, LOAD_N, rounds)
    rows += _against(f"stored session -> models, N={LOAD_N:,}", seconds, scale=1e3, unit="ms", target=1.0)
    return rows


def _growth_rows(rounds: int) -> list[Row]:
    """Each growing job at every size of GROWTH, every (system, size) timed in the same
    interleaved rounds: a busy spell of the machine hits every size alike, so the
    per-message times compare across sizes as well as across systems."""
    jobs: dict[str, Job] = {
        "canonical -> Anthropic body": _to_anthropic,
        "OpenAI body -> Anthropic body": _convert,
        "stored session -> models": _load,
    }
    sizes = " / ".join(f"{n:,}" for n in GROWTH)
    rows: list[Row] = []
    for job_name, job in jobs.items():
        print(f"{job_name}, N = {sizes}", file=sys.stderr, flush=True)
        with ExitStack() as stack:
            contenders = {(c.system, n): c for n in GROWTH for c in job(n, stack)}
            keyed = {f"{system} @ {n}": c for (system, n), c in contenders.items()}
            seconds = _timed(keyed, rounds)
        systems = dict.fromkeys(system for system, _ in contenders)
        for system in systems:
            times = [seconds[f"{system} @ {n}"] / n * 1e6 for n in GROWTH]
            growth, last = times[-1] / times[0], times[-1] / times[-2]
            ok = growth <= LINEAR
            verdict = "" if ok else " STEPS UP" if last <= STILL else " NOT LINEAR"
            rows.append(
                Row(
                    "linearity",
                    f"{job_name}: {system}{verdict}",
                    growth,
                    f"x ({GROWTH[-1]:,} vs {GROWTH[0]:,})",
                    target=f"<= {LINEAR:.0f}x",
                    ok=ok,
                    detail=f"µs/msg at {sizes}: " + " / ".join(f"{t:.3g}" for t in times),
                )
            )
    return rows


def run() -> list[Row]:
    """Every comparison (see module doc); one row saying why when the peers are missing."""
    try:
        from bench import _peers
    except ImportError as exc:
        return [Row(AREA, f"peers not installed ({exc.name}): run `nox -s bench`", 0.0, "")]
    import logging

    logging.getLogger("metis").setLevel(logging.ERROR)  # lossy-projection WARNs are not measured here
    print("peers:", ", ".join(f"{name} {version}" for name, version in _peers.versions().items()))
    rounds, growth_rounds = _rounds()
    return _comparison_rows(rounds) + _growth_rows(growth_rounds)
