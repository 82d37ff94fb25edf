"""Typed errors: one base class, and every message says what is wrong and where."""

from __future__ import annotations

import inspect

import metis
import metis.errors as errors
import pytest
from metis.errors import (
    AdapterError,
    CapabilityError,
    DocumentError,
    FieldProblem,
    InvariantError,
    MetisError,
    ProviderError,
    StoreError,
    WireFormatError,
)
from metis.ids import ToolIdError
from metis.invariants import Violation


def all_error_classes() -> list[type[BaseException]]:
    return [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == errors.__name__
    ]


def test_every_error_inherits_metis_error() -> None:
    classes = all_error_classes()
    assert len(classes) >= 19
    for cls in [*classes, ToolIdError]:
        assert issubclass(cls, MetisError), cls
    assert not issubclass(MetisError, (KeyError, TypeError, ValueError))  # never caught by accident


def test_every_error_is_exported() -> None:
    exported = set(errors.__all__)
    assert {cls.__name__ for cls in all_error_classes()} <= exported
    for name in exported:
        assert getattr(metis, name) is getattr(errors, name)


@pytest.mark.parametrize(
    "cls",
    [
        c
        for c in all_error_classes()
        if c not in (DocumentError, InvariantError, CapabilityError, WireFormatError)
        and not issubclass(c, ProviderError)  # they need the provider's error type
    ],
)
def test_simple_errors_say_what_and_where(cls: type[MetisError]) -> None:
    error = cls(
        "it broke",
        path="content[2].type",
        provider="openai",
        message_id="01HZ0000000000000000000001",
        hint="try again",
    )
    text = str(error)
    assert text.startswith("it broke")
    assert "content[2].type" in text and "openai" in text and "01HZ0000000000000000000001" in text
    assert text.endswith(". try again")
    assert (error.path, error.provider, error.message_id, error.hint) == (
        "content[2].type",
        "openai",
        "01HZ0000000000000000000001",
        "try again",
    )


def test_where_is_omitted_when_unknown() -> None:
    assert str(MetisError("plain")) == "plain"


def test_document_error_lists_every_problem() -> None:
    problems = [
        FieldProblem("content[0].type", "unknown type 'audio'"),
        FieldProblem("", "not an object", rule="§5.1.3 x"),
    ]
    error = DocumentError("message 01HZ", problems, message_id="01HZ")
    text = str(error)
    assert "content[0].type: unknown type 'audio'" in text
    assert "(root): not an object [§5.1.3 x]" in text
    assert error.problems == problems
    assert error.message_id == "01HZ"


def test_document_error_truncates_long_listings() -> None:
    problems = [FieldProblem(f"content[{i}]", "bad") for i in range(25)]
    text = str(DocumentError("doc", problems))
    assert "content[19]" in text and "content[20]" not in text and "(+5 more)" in text


def test_invariant_error_carries_the_violations() -> None:
    violation = Violation("01HZ0000000000000000000001", "metadata.usage", "§5.3.3", "missing")
    error = InvariantError([violation], message_id="01HZ0000000000000000000001")
    assert error.violations == [violation]
    assert "1 invariant violation(s)" in str(error)
    assert "message 01HZ0000000000000000000001: metadata.usage: missing [§5.3.3]" in str(error)


def test_invariant_error_truncates_long_listings() -> None:
    violations = [Violation("01HZ", f"content[{i}]", "§5.1.3", "bad") for i in range(23)]
    text = str(InvariantError(violations))
    assert text.startswith("23 invariant violation(s)") and "content[20]" not in text and "(+3 more)" in text


def test_capability_error_names_model_and_reasons() -> None:
    error = CapabilityError("Cannot swap to X: session contains images", model="ollama:x", reasons=["images"])
    assert error.model == "ollama:x" and error.reasons == ["images"]
    assert str(error) == "Cannot swap to X: session contains images"


def test_provider_error_carries_status_type_and_provider() -> None:
    error = ProviderError(
        "Overloaded", provider="anthropic", error_type="overloaded_error", status_code=529, retryable=True
    )
    assert isinstance(error, AdapterError)
    assert str(error).startswith("HTTP 529 overloaded_error: Overloaded")
    assert "provider anthropic" in str(error)
    assert error.retryable and error.status_code == 529


def test_wire_format_error_keeps_raw_text() -> None:
    error = WireFormatError("bad chunk", raw="data: {", provider="openai", path="choices[0].delta")
    assert error.raw == "data: {"
    assert "choices[0].delta" in str(error) and "openai" in str(error)


def test_store_errors_are_one_family() -> None:
    assert issubclass(errors.SessionNotFoundError, StoreError)
    assert issubclass(errors.UnknownAdapterError, AdapterError)
    assert issubclass(errors.CriticalBlockError, AdapterError)
