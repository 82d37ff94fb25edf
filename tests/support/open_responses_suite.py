"""Run the Open Responses compliance suite itself (TypeScript, Bun) against `metis serve`.

The suite lives in the openresponses/openresponses repository and is published to no
registry, so the test suite runs its cases in Python instead
(tests/gateway/test_gateway_open_responses.py, same requests and checks, the specification's
types from `openresponses-types`). With a checkout of that repository at hand, this script runs
the original against the gateway, the scripted upstream replaying a documented reply of
each upstream API (Anthropic Messages, OpenAI Chat, OpenAI Responses):

    # a checkout of the openresponses/openresponses repository in /tmp/openresponses, then
    (cd /tmp/openresponses && npm install && npm install --no-save bun)
    PYTHONPATH=runtime:generated python -m tests.support.open_responses_suite /tmp/openresponses

It prints the suite's own report for each upstream and exits non-zero when any case fails.
Everything stays on 127.0.0.1; the checkout is the user's, never part of this repository.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.gateway.test_gateway_open_responses import UPSTREAMS, _replay
from tests.support.gateway_support import replaying_gateway


def _runner(suite: Path) -> list[str]:
    """The suite's entry point (`bin/` in current checkouts, `scripts/` in older ones),
    run by the checkout's own Bun when installed there, else Bun on PATH."""
    for entry in ("bin/compliance-test.ts", "scripts/compliance-test.ts"):
        if (suite / entry).is_file():
            local = suite / "node_modules" / ".bin" / "bun"
            bun = str(local) if local.exists() else shutil.which("bun")
            if bun is None:
                raise SystemExit("no bun: `npm install --no-save bun` in the checkout")
            return [bun, "run", entry]
    raise SystemExit(f"{suite} holds no compliance-test.ts (a checkout of openresponses/openresponses?)")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("suite", type=Path, help="a checkout of openresponses/openresponses, installed")
    args = parser.parse_args()
    command = _runner(args.suite)
    failed = 0
    with tempfile.TemporaryDirectory() as home, replaying_gateway(_replay, Path(home)) as gateway:
        for model in UPSTREAMS:
            print(f"== Open Responses compliance via metis serve, model {model}", flush=True)
            run = [
                *command,
                "--base-url",
                f"{gateway.url}/v1",
                "--api-key",
                "gateway-key",
                "--model",
                model,
            ]
            failed += subprocess.run(run, cwd=args.suite, timeout=300, check=False).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
