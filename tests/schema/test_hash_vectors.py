"""Python against the cross-language hash vectors (schema/vectors/hash.json).

Each vector is a message document as JSON text with the canonical JSON and SHA-256 that
`metis.canonical` gives it, or `refused`; the TypeScript package's suite
(typescript/test/hash.test.mjs) holds canonicalJson/messageHash to the same file, so a
message hashes to one identity in both languages (spec §6.5). The file is written by
`python -m codegen.hash_vectors`; a change to hashing that would move a hash fails here
before it can split the two languages.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from metis import _json
from metis.canonical import canonical_json, message_hash, read_message
from metis.errors import MetisError

from codegen import hash_vectors

VECTORS: list[dict[str, Any]] = json.loads(hash_vectors.TARGET.read_text(encoding="utf-8"))


def test_the_vectors_cover_the_tricky_cases() -> None:
    descriptions = " ".join(v["description"] for v in VECTORS)
    for topic in ("non-ASCII", "code point", "1.0 is a float", "2**64", "Decimal", "provider_raw", "v1"):
        assert topic in descriptions
    assert sum(1 for v in VECTORS if v.get("refused")) >= 3


@pytest.mark.parametrize("vector", VECTORS, ids=[v["description"][:60] for v in VECTORS])
def test_python_gives_every_vector_its_bytes_and_hash(vector: dict[str, Any]) -> None:
    if vector.get("refused"):
        with pytest.raises((MetisError, _json.JSONDecodeError)):
            read_message(vector["document"])
        return
    message = read_message(vector["document"])
    assert canonical_json(message).decode("utf-8") == vector["canonical"]
    assert message_hash(message) == vector["sha256"]
    assert hashlib.sha256(vector["canonical"].encode("utf-8")).hexdigest() == vector["sha256"]


def test_the_file_is_what_the_runtime_writes_now() -> None:
    assert hash_vectors.render() == hash_vectors.TARGET.read_text(encoding="utf-8"), (
        "schema/vectors/hash.json is stale: run `python -m codegen.hash_vectors`"
    )


def test_the_file_lives_under_schema() -> None:
    assert hash_vectors.TARGET.is_relative_to(Path(hash_vectors.REPO) / "schema")
