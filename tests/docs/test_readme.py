"""Every README example runs offline exactly as written.

Each ```python block is executed from the repository root (the README says to run them
there: they read `examples/recorded/*.json`), with a fresh METIS_HOME and no API key in the
environment. Each line of the CLI tour's ```bash block is run through the real `metis`
command group, in order, against that same METIS_HOME. The other bash blocks install
packages or run the project's own tooling (pip, nox, codegen): they are named below, so a
new block cannot slip in untested.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis.cli import cli

from tests.support.paths import REPO

ROOT = REPO
README = ROOT / "README.md"
TOOLING = ("pip install", "nox -s", "python -m codegen", "python -m pytest", "npm ")
"""Commands of the untested blocks: installing, and the project's own CI tooling."""
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def _commands(block: str) -> list[str]:
    lines = (line.split("  #", 1)[0].strip() for line in block.splitlines())
    return [line for line in lines if line]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("METIS_HOME", str(tmp_path / "home"))
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    return tmp_path


def test_every_bash_block_is_the_cli_tour_or_tooling() -> None:
    kinds = []
    for block in _blocks("bash"):
        commands = _commands(block)
        if all(c.startswith("metis ") or re.match(r"^[A-Z_]+=\S+ metis ", c) for c in commands):
            kinds.append("cli")
        else:
            assert all(c.startswith(TOOLING) for c in commands), block
            kinds.append("tooling")
    assert kinds.count("cli") == 1


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_example_runs_offline(index: int, offline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _blocks("python")[index]
    exec(compile(code, f"README.md python block {index + 1}", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()  # every example shows something


def test_python_tour_swaps_provider_and_prices_the_reply(
    offline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(_blocks("python")[0], "README.md tour", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "metis is licensed under Apache-2.0." in out
    assert "openai:gpt-4o" in out and "genai-prices@" in out  # priced from the maintained source


def test_cli_tour_runs_in_order(offline: Path) -> None:
    (block,) = [b for b in _blocks("bash") if _commands(b)[0].startswith("metis ")]
    runner = CliRunner()
    outputs = []
    for command in _commands(block):
        words = shlex.split(command)
        env = {}
        while "=" in words[0]:
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        assert words[0] == "metis"
        result = runner.invoke(cli, words[1:], env=env, catch_exceptions=False)
        assert result.exit_code == 0, f"{command}\n{result.output}"
        assert "Traceback" not in result.output
        outputs.append(result.output)
    assert "Summarize README.md" in outputs[1]  # `metis sessions` right after the demo lists it
    assert "Hello! How can I help?" in outputs[-1]


def test_builders_fill_in_what_a_message_needs() -> None:
    import metis

    message = metis.user("hi")
    assert message.role == metis.Role.user and message.session_id == "local"
    assert message.content == [metis.TextBlock(type="text", text="hi")]
    call = metis.new_tool_id()
    answer = metis.tool_result(call, "42", is_error=True, session_id="s1")
    assert answer.metadata.parent_tool_use_id == call
    assert answer.content[0].is_error and answer.session_id == "s1"
    with pytest.raises(metis.DocumentError) as caught:
        metis.user([{"type": "text"}])  # a text block without text
    assert "content[0]" in str(caught.value)


def test_every_public_name_of_the_package_resolves() -> None:
    import metis

    names = metis.__all__
    for name in (
        "Client",
        "Store",
        "ToolRegistry",
        "message_hash",
        "user",
        "system",
        "tool_result",
        "Message",
    ):
        assert name in names
    for name in names:
        assert getattr(metis, name) is not None, name
    with pytest.raises(AttributeError):
        _ = metis.no_such_name
