"""Every script in examples/ runs offline, as a user would run it, and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

EXAMPLES = REPO / "examples"
EXPECTED = {
    "agent_tool_loop.py": [
        "[anthropic:claude-sonnet-4-6] The README describes",
        "[openai:gpt-4o] metis is licensed",
    ],
    "async_streaming.py": ["The README describes **metis**", "37 tokens out"],
    "import_and_convert.py": ["tool      ['tool_result']", "genai-prices@", '"type": "tool_use"'],
}


def test_every_example_is_checked() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["METIS_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for needle in EXPECTED[name]:
        assert needle in done.stdout, done.stdout
