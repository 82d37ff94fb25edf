"""Hostile canonical documents: mutated v2 messages into the reader, the schema check,
hashing and the store give only MetisErrors, and the store reads back whatever it
accepted (issue 17, item 5; tests/support/fuzz_documents.py). METIS_FUZZ_EXAMPLES raises the
budget for a longer hunt (`python -m bench.fuzz` counts a long run)."""

from __future__ import annotations

import os

from hypothesis import given

from tests.support.fuzz_documents import mutated_document, untyped_document
from tests.support.fuzz_support import fuzz_settings

EXAMPLES = int(os.environ.get("METIS_FUZZ_EXAMPLES", "250"))


@fuzz_settings(EXAMPLES)
@given(mutated_document())
def test_mutated_documents_give_only_metis_errors_and_what_is_stored_reads_back(doc: object) -> None:
    found = untyped_document(doc)
    assert found is None, f"{type(found).__name__}: {str(found)[:300]}"
