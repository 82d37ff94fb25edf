"""The hostile-input hunt at length, counted (issue 17): `python -m bench.fuzz --n 20000`.

The same generators as the bounded pytest suite (tests/support/fuzz_support.py, wire_shapes.py,
fuzz_documents.py), run for `--n` inputs in all, spread over three families:

- `golden`: recorded bodies and streams of every provider, mutated;
- `shapes`: bodies and streams drawn from each adapter's declared wire TypedDicts, broken
  at random fields;
- `documents`: v2 canonical messages, mutated, into the reader, schema check, hashing and
  the store (which must read back what it accepted);
- `api`: what only a Python caller can pass (a lone surrogate, NaN, an infinity, an
  integer past 4,300 digits) in a message, in request options and in a routing policy,
  through hashing, every adapter's `to_wire`, the store and `Session.send`
  (tests/support/fuzz_api.py, issue 29).

The golden and documents families also put those values into bodies, error bodies,
streams (as text pieces) and metadata, and label documents schema version 1 so they go
through the migrations.

Every input that raises anything but a MetisError (or that the store does not read back)
is a finding; the report gives the inputs tried and the untyped exceptions per target,
and each distinct finding once (its type, its message and the metis line that raised it).
Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent  # on sys.path: the generators are in `tests.support`


@dataclass
class Target:
    """One fuzz target: a strategy of inputs and the check that finds a non-metis error."""

    family: str
    name: str
    strategy: Any
    check: Callable[[Any], BaseException | None]
    tried: int = 0
    found: list[BaseException] = field(default_factory=list)


def targets() -> list[Target]:
    sys.path.insert(0, str(REPO))
    from hypothesis import strategies as st

    from tests.support.fuzz_api import (
        hostile_message,
        hostile_options,
        hostile_policy,
        untyped_message,
        untyped_options,
        untyped_policy,
        untyped_send,
    )
    from tests.support.fuzz_documents import mutated_document, untyped_document
    from tests.support.fuzz_support import (
        KINDS,
        PROVIDERS,
        mutated_json,
        mutated_stream,
        parsed,
        seeds,
        untyped,
    )
    from tests.support.wire_shapes import hostile, hostile_stream, shapes

    def checker(provider: str, kind: str) -> Callable[[Any], BaseException | None]:
        return lambda wire: untyped(provider, kind, wire)

    out: list[Target] = []
    for provider in PROVIDERS:
        for kind in KINDS:
            pool = seeds(provider, kind)
            if pool:
                seed = st.sampled_from(pool)
                strategy = (
                    seed.flatmap(mutated_stream)
                    if kind == "stream"
                    else seed.flatmap(lambda s: mutated_json(parsed(s.data)))
                )
                out.append(Target("golden", f"{provider} {kind}", strategy, checker(provider, kind)))
    for provider in PROVIDERS:
        spec = shapes(provider)
        for kind in KINDS:
            strategy = hostile_stream(provider) if kind == "stream" else hostile(getattr(spec, kind))
            out.append(Target("shapes", f"{provider} {kind}", strategy, checker(provider, kind)))
    out.append(Target("documents", "v2 message", mutated_document(), untyped_document))
    out.append(Target("api", "message", hostile_message(), untyped_message))
    out.append(Target("api", "request options", hostile_options(), untyped_options))
    out.append(Target("api", "routing policy", hostile_policy(), untyped_policy))
    out.append(Target("api", "Session.send", hostile_options(), untyped_send))
    return out


def hunt(target: Target, examples: int, seed: int | None) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fix_seed

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(target.strategy)
    def run(value: Any) -> None:
        target.tried += 1
        found = target.check(value)
        if found is not None:
            target.found.append(found)

    (fix_seed(seed)(run) if seed is not None else run)()


def site(exc: BaseException) -> str:
    """The innermost metis line the exception passed through."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/metis/" in f.filename]
    if not frames:
        return "(outside metis)"
    last = frames[-1]
    return f"{last.filename.split('/metis/', 1)[1]}:{last.lineno}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20_000, help="inputs in all (default 20,000)")
    parser.add_argument("--seed", type=int, help="hypothesis seed (default: random)")
    parser.add_argument(
        "--family",
        action="append",
        choices=["golden", "shapes", "documents", "api"],
        help="hunt these families only (repeatable; default: all), the budget spread as usual",
    )
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)  # the adapters' WARNs about odd input, by the thousand
    warnings.simplefilter("ignore")
    chosen = [t for t in targets() if not args.family or t.family in args.family]
    weights = {"golden": 0.40, "shapes": 0.40, "documents": 0.10, "api": 0.10}
    per_family = Counter(t.family for t in chosen)
    started = time.perf_counter()
    for target in chosen:
        budget = max(1, round(args.n * weights[target.family] / per_family[target.family]))
        hunt(target, budget, args.seed)
        print(
            f"{target.family:9s} {target.name:22s} inputs {target.tried:7,d}  untyped {len(target.found):4d}",
            flush=True,
        )
    tried = sum(t.tried for t in chosen)
    found = [exc for t in chosen for exc in t.found]
    took = time.perf_counter() - started
    print(f"\ninputs tried: {tried:,}   untyped exceptions: {len(found)}   ({took:.0f} s)")
    for family in sorted(per_family, key=list(weights).index):
        family_targets = [t for t in chosen if t.family == family]
        print(
            f"  {family:9s} inputs {sum(t.tried for t in family_targets):7,d}"
            f"  untyped {sum(len(t.found) for t in family_targets)}"
        )
    distinct: dict[tuple[str, str], BaseException] = {}
    for exc in found:
        distinct.setdefault((type(exc).__name__, site(exc)), exc)
    for (name, where), exc in distinct.items():
        print(f"  finding: {name} at {where}: {str(exc)[:200]!r}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
