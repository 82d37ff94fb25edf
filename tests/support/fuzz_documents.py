"""Mutated canonical documents for the hostile-input suite (issue 17, item 5).

Valid v2 messages of every shape (`store_support.every_shape`), written as JSON and
mutated as a broken or hostile writer would (`fuzz_support.mutated_json`), go through
everything that reads a canonical document: the reader (`read_message`), the schema check
(`validate_document`), hashing, and the store, which must read back whatever it accepted.
Anything but a MetisError is a finding, and so is a stored message that does not load
back equal. Round three (issue 29): documents are also labelled schema version 1 now and
then, so they go through the migrations, their metadata is given hostile values (a
`critical_blocks` of objects, nesting a thousand deep), and the reader is given the
document as a Python mapping as well as JSON text (a mapping may hold what text cannot:
a lone surrogate, a NaN, an integer past 4,300 digits).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st
from metis.canonical import canonical_json, dump_message, message_hash, messages_equal, read_message
from metis.errors import MetisError
from metis.store import Store
from metis.validation import validate_document

from tests.support.fuzz_support import REPLACEMENTS, dumps, mutated_json
from tests.support.store_support import every_shape


@cache
def seed_documents() -> tuple[dict[str, Any], ...]:
    return tuple(dump_message(m) for m in every_shape("sess_docfuzz"))


@st.composite
def mutated_document(draw: st.DrawFn) -> Any:
    """One seed message, mutated at one to three places (or left whole, now and then),
    sometimes with a hostile metadata field, sometimes labelled schema version 1."""
    doc = draw(st.sampled_from(seed_documents()))
    doc = draw(mutated_json(doc)) if draw(st.integers(0, 5)) else doc
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and draw(st.integers(0, 3)) == 0:
        doc = dict(doc)  # never the cached seed itself
        key = draw(
            st.sampled_from(["critical_blocks", "provider_raw", "zz_unknown", *sorted(doc["metadata"])])
        )
        doc["metadata"] = {
            **doc["metadata"],
            key: draw(st.sampled_from(METADATA_VALUES))(doc["metadata"].get(key)),
        }
    if isinstance(doc, dict) and draw(st.integers(0, 3)) == 0:
        doc = {**doc, "schema_version": 1}
    return doc


METADATA_VALUES = [
    lambda old: [{}],
    lambda old: {"0": 0},
    lambda old: [[0]],
    lambda old: [0, {"a": 1}],
    *REPLACEMENTS,
]
"""What a metadata field is given: critical_blocks of objects or lists (once a TypeError
in the reader), and every generic replacement (deep nesting, surrogates, huge integers)."""


class NotReadBack(AssertionError):
    """The store accepted a message and then did not give it back equal."""


def untyped_document(doc: Any) -> BaseException | None:
    """The finding a document raises (a non-metis exception, or NotReadBack), or None."""
    text = dumps(doc)
    try:
        read_message(doc)  # the Python API: a mapping may hold what JSON text cannot
    except MetisError:
        pass
    except Exception as exc:
        return exc
    try:
        validate_document(doc)
        message = read_message(text)
    except MetisError:
        return None
    except Exception as exc:  # the point of the suite: anything else is a finding
        return exc
    try:
        message_hash(message)
        canonical_json(message)
        with Store.open(":memory:") as store:
            store.create_session("/w", session_id=message.session_id)
            store.append(message)
            (back,) = store.load_session(message.session_id)
            if not messages_equal(back, message):
                return NotReadBack(f"message {message.id} was stored and read back different")
    except MetisError:
        return None
    except Exception as exc:
        return exc
    return None


__all__ = ["NotReadBack", "mutated_document", "seed_documents", "untyped_document"]
