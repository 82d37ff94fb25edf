"""Mutated canonical documents for the hostile-input suite (issue 17, item 5).

Valid v2 messages of every shape (`test_store_support.every_shape`), written as JSON and
mutated as a broken or hostile writer would (`fuzz_support.mutated_json`), go through
everything that reads a canonical document: the reader (`read_message`), the schema check
(`validate_document`), hashing, and the store, which must read back whatever it accepted.
Anything but a MetisError is a finding, and so is a stored message that does not load
back equal.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from fuzz_support import dumps, mutated_json
from hypothesis import strategies as st
from metis.canonical import canonical_json, dump_message, message_hash, messages_equal, read_message
from metis.errors import MetisError
from metis.store import Store
from metis.validation import validate_document
from test_store_support import every_shape


@cache
def seed_documents() -> tuple[dict[str, Any], ...]:
    return tuple(dump_message(m) for m in every_shape("sess_docfuzz"))


@st.composite
def mutated_document(draw: st.DrawFn) -> Any:
    """One seed message, mutated at one to three places (or left whole, now and then)."""
    doc = draw(st.sampled_from(seed_documents()))
    return draw(mutated_json(doc)) if draw(st.integers(0, 5)) else doc


class NotReadBack(AssertionError):
    """The store accepted a message and then did not give it back equal."""


def untyped_document(doc: Any) -> BaseException | None:
    """The finding a document raises (a non-metis exception, or NotReadBack), or None."""
    text = dumps(doc)
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
        with Store.open(None) as store:
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
