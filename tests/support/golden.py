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
a missing one fails the test. The documents compared are written here too where every
provider shares them (`error_document`; `check_error` runs a whole error golden), so one
provider's golden never drifts from another's in form.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.errors import ProviderError

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


def error_status(name: str) -> int:
    """The HTTP status an `error_<status>[_<case>].json` input was answered with."""
    return int(name.removeprefix("error_").split(".", 1)[0].split("_", 1)[0])


def error_document(error: ProviderError) -> dict[str, Any]:
    """A ProviderError as the `.error.golden.json` document."""
    return {
        "error_type": error.error_type,
        "message": error.message,
        "retryable": error.retryable,
        "status_code": error.status_code,
    }


def check_error(provider: str, name: str) -> ProviderError:
    """The error golden of one `error_*` input: the provider's adapter parses its bytes at the
    status the name gives, and the error's document equals the expected file. The error is
    returned for the provider's own further checks."""
    error = adapters.get(provider).parse_error(read_input(provider, name), error_status(name))
    check(provider, expected_name(name), error_document(error))
    return error


__all__ = [
    "ROOT",
    "UPDATE",
    "check",
    "check_error",
    "error_document",
    "error_status",
    "expected_name",
    "folder",
    "inputs",
    "read_input",
]
