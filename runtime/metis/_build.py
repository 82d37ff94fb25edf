"""Generated models built from values that are valid by construction, without re-validating them.

Why: every parsed response ends in `assembly.finish_assistant`, which puts together an
ASSISTANT message from parts that are already checked: content blocks the adapter built
through their pydantic validators, ids this process minted, the catalog's model ids, token
counts from `usage.normalize_usage`, a cost computed from a validated price table. Running
those parts through pydantic again (Usage, RoutingDecisionRecord, MessageMetadata, then
Message around them, each with its Python rule hooks) was most of the time spent turning a
reply into a Message. `construct` makes the instance directly, the way pydantic's own
validator leaves it (every field in `__dict__`, `__pydantic_fields_set__` as given).

It is only for values the caller has established; anything from outside (a provider's
text, a caller's id) is validated where it enters. The rules that tie a message's parts
together (spec §5.1: which blocks a role may hold, a complete reply is not empty) still run
on every built Message: `finish_assistant` calls the schema's compiled rules itself.

Checked mode (`CHECKED`, on when the environment sets `METIS_CHECK_BUILDS=1`, and always
in the test suite) validates every constructed instance with the model's full validator as
well and raises if the two differ, so any caller that hands over a value it had not in
fact established fails the tests instead of writing an invalid document.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

CHECKED = os.environ.get("METIS_CHECK_BUILDS") == "1"
"""Validate every constructed instance too (tests turn this on; see module docstring)."""

_new = object.__new__
# BaseModel's slots, set through their own descriptors: what `object.__setattr__` ends up
# calling, without looking the name up first (a third of the cost of a construct).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


class BuildCheckError(AssertionError):
    """A constructed instance differs from what the model's validator makes of its values."""


def construct(
    cls: type[M], values: dict[str, Any], fields_set: set[str] | None = None, *, deferred: bool = False
) -> M:
    """An instance of `cls` holding `values`: every field of `cls`, each already valid.

    `fields_set` is what `model_fields_set` reports (default: every field), as if exactly
    those fields had been given to the validator. `values` becomes the instance's
    `__dict__`: the caller hands it over and does not keep using it. `deferred`: the
    caller runs its own checks first and then `verify` (checked mode only).
    """
    instance = _new(cls)
    _set_dict(instance, values)
    _set_fields_set(instance, set(values) if fields_set is None else fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    if CHECKED and not deferred:
        verify(instance)
    return instance


def verify(instance: BaseModel) -> None:
    """In checked mode, raise BuildCheckError unless the validator makes `instance` of its values."""
    if not CHECKED:
        return
    cls = type(instance)
    values = instance.__dict__
    if list(values) != list(cls.model_fields):
        raise BuildCheckError(f"{cls.__name__}: fields {list(values)} are not {list(cls.model_fields)}")
    given = {k: v for k, v in values.items() if k in instance.model_fields_set}
    try:
        validated = cls.__pydantic_validator__.validate_python(given)
    except Exception as exc:
        raise BuildCheckError(f"{cls.__name__} built from invalid values: {exc}") from exc
    if validated != instance or validated.model_fields_set != instance.model_fields_set:
        raise BuildCheckError(f"{cls.__name__}: built {instance!r}, validator made {validated!r}")


__all__ = ["CHECKED", "BuildCheckError", "construct", "verify"]
