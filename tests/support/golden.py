"""The one golden-file harness every provider folder under tests/golden/ uses.

Naming scheme (the same in every provider folder):

| input (wire, from the provider's docs or SDK fixtures) | expected output (reviewed, committed) |
|---|---|
| `response_<case>.json`                  | `response_<case>.canonical.golden.json` — the canonical Message |
| `stream_<case>.sse` / `.ndjson` / `.json` | `stream_<case>.events.golden.json` — the canonical StreamEvents |
| `request_<case>.json`                   | `request_<case>.import.golden.json` — the WireImport |
| `error_<case>.json`                     | `error_<case>.error.golden.json` — the ProviderError fields |
| (the shared canonical conversation)     | `conversation.request.golden.json` — the request body |

An expected file is rewritten only with METIS_UPDATE_GOLDEN=1 (then reviewed in the diff);
a missing one fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.paths import GOLDEN

ROOT = GOLDEN
UPDATE = os.environ.get("METIS_UPDATE_GOLDEN") == "1"

_OUTPUT = {"response": "canonical", "stream": "events", "request": "import", "error": "error"}
_STREAM_SUFFIXES = (".sse", ".ndjson", ".json")


def folder(provider: str) -> Path:
    """tests/golden/<provider>/."""
    return ROOT / provider


def inputs(provider: str, kind: str) -> list[str]:
    """Case names (file names without suffix) of one kind of wire input in a provider folder."""
    suffixes = _STREAM_SUFFIXES if kind == "stream" else (".json",)
    names = []
    for path in sorted(folder(provider).glob(f"{kind}_*")):
        if ".golden." in path.name or path.suffix not in suffixes:
            continue
        names.append(path.name)
    return names


def read_input(provider: str, name: str) -> bytes:
    """The bytes of one wire input file."""
    return (folder(provider) / name).read_bytes()


def expected_name(name: str) -> str:
    """The expected-output file of an input file, by the naming scheme."""
    stem = name.split(".", 1)[0]
    kind = stem.split("_", 1)[0]
    return f"{stem}.{_OUTPUT[kind]}.golden.json"


def _dump(data: Any) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def check(provider: str, name: str, actual: Any) -> None:
    """`actual` (JSON-able) equals tests/golden/<provider>/<name>; rewritten with METIS_UPDATE_GOLDEN=1."""
    path = folder(provider) / name
    data = orjson.loads(_dump(actual))
    if UPDATE:
        path.write_bytes(_dump(data))
        return
    if not path.exists():
        pytest.fail(f"golden file {path} is missing: run with METIS_UPDATE_GOLDEN=1 and review it")
    assert data == orjson.loads(path.read_bytes()), f"{path} differs (METIS_UPDATE_GOLDEN=1 to rewrite)"


__all__ = ["ROOT", "UPDATE", "check", "expected_name", "folder", "inputs", "read_input"]
