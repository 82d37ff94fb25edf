"""Which provider a JSON request body is for: one detection (`adapters._kit.detect`) reading
each provider's marks row (`ProviderFacts.marks`), used by `metis import` (guessing a
file's provider, refusing a `--from` the body contradicts), `metis convert` and
`metis validate` alike. A new provider brings its row; the detection does not change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from click.testing import CliRunner
from metis import adapters
from metis.adapters._kit.detect import RequestMarks, contradiction, detect
from metis.adapters._kit.facts import ProviderFacts
from metis.adapters.ollama import OllamaAdapter
from metis.cli import cli

from tests.support import golden

CHAT_MARKED = {"anthropic/request_recorded.json"}
"""Golden requests carrying another format's mark: Anthropic's recorded request holds a
`system` role message inside `messages` (a Chat Completions mark; the importer reads it
anyway), so no single format fits it and `--from anthropic` is refused for it."""


def golden_requests() -> list[tuple[str, str]]:
    return [
        (path.parent.name, path.name)
        for path in sorted(golden.ROOT.glob("*/request_*.json"))
        if ".golden." not in path.name and f"{path.parent.name}/{path.name}" not in CHAT_MARKED
    ]


def body(provider: str, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(golden.read_input(provider, name))
    return loaded


@pytest.mark.parametrize(("provider", "name"), golden_requests())
def test_each_golden_request_is_detected_as_its_providers(provider: str, name: str) -> None:
    request = body(provider, name)
    assert detect(request) == provider
    assert contradiction(request, provider) is None


def test_a_body_with_another_formats_mark_fits_none() -> None:
    (name,) = CHAT_MARKED
    request = body(*name.split("/"))
    assert detect(request) is None
    what, fits = contradiction(request, "anthropic") or ("", frozenset())
    assert what == "a `system` role message" and "anthropic" not in fits


def test_no_mark_tells_nothing() -> None:
    assert detect({"hello": "world"}) is None
    assert detect({"model": "gpt-4o"}) is None  # a model alone is no request body
    plain = {"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": "Hi"}]}
    assert detect(plain) == "anthropic"  # several formats fit: the model breaks the tie
    assert detect({**plain, "model": "m"}) == "openai"  # else OpenAI Chat, whose shape it is


class PromptServer(OllamaAdapter):
    """A made-up provider whose bodies are `{"prompt": ...}`: a facts row, no detection code."""

    name: ClassVar[str] = "prompter"
    facts: ClassVar[ProviderFacts] = dataclasses.replace(
        OllamaAdapter.facts,
        provider="prompter",
        marks=RequestMarks(keys=frozenset({"prompt", "raw"}), reply=(("response", None),)),
    )


@pytest.fixture
def prompter(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(adapters._MODULES, "prompter", "tests.prompter")
    monkeypatch.setitem(adapters._cache, "prompter", PromptServer())
    yield


def test_a_new_providers_row_is_all_detection_needs(prompter: None) -> None:
    assert detect({"model": "m", "prompt": "Hi", "raw": True}) == "prompter"
    assert detect({"model": "m", "messages": []}, {"response": "Hello"}) is None  # its reply, not its body
    what, fits = contradiction({"prompt": "Hi"}, "openai") or ("", frozenset())
    assert what == "a top-level `prompt` field" and fits == {"prompter"}


@pytest.mark.parametrize(
    ("provider", "name"), [("mistral", "request_tools.json"), ("openrouter", "request_openai.json")]
)
def test_validate_and_import_detect_alike(tmp_path: Path, provider: str, name: str) -> None:
    """`metis validate` guessed with a sniffer of its own (a Mistral body was an "anthropic"
    or "openai" one); it now reads the same rows as `metis import`."""
    path = tmp_path / name
    path.write_bytes(golden.read_input(provider, name))
    result = CliRunner().invoke(cli, ["validate", str(path)], catch_exceptions=False)
    assert f"{provider} request body" in result.stdout, result.output
