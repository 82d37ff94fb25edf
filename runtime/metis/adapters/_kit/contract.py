"""Each provider's own request contract, derived from the shape its adapter reads.

An adapter's request shape (`<provider>/wire.py`) is as lenient as importing needs: it
reads recorded bodies that lack fields the provider insists on (Anthropic's `max_tokens`),
and lets through top-level fields it does not map, since those are kept as the provider's
own options (`AdapterOptions.provider_options`), not refused. "metis can import it" is
therefore a weaker claim than "the provider would accept it", and `metis validate
--provider` checks both, separately.

The strict contract is not declared a second time. It is the adapter's declared shape,
rebuilt with the differences in one small row per provider, a field of its facts row
(`ProviderFacts.contract`, declared beside the rest of its facts): the fields the
provider requires that the shape leaves optional, the top-level fields the provider
accepts that the shape does not declare (with their value types), and the fields a shared
shape declares that this dialect does not take (OpenAI Chat has no `reasoning`, which the
Chat shape declares for OpenRouter). The rebuilt TypedDict forbids any other top-level
field, and a required field may not be null. Below the top level the adapter's types
apply as declared.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType, NoneType, UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    cast,
    get_args,
    get_origin,
)

from pydantic import AliasChoices, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict, get_type_hints

from ...errors import FieldProblem, UnknownAdapterError
from . import reader

Json = dict[str, Any]
Number = int | float


@dataclass(frozen=True)
class RequestContract:
    """One provider's request contract, as differences from its adapter's declared shape."""

    provider: str
    shape: str
    """`module:Class` of the adapter's request shape (imported only when a check runs)."""
    required: frozenset[str] = frozenset()
    """Fields the provider requires that the shape leaves optional."""
    accepted: Mapping[str, Any] = field(default_factory=dict)
    """Top-level fields the provider accepts that the shape does not declare: name -> type."""
    refused: frozenset[str] = frozenset()
    """Fields the (shared) shape declares that this provider does not take."""
    unknown: Literal["rejected", "ignored"] = "rejected"
    """What the server does with any other top-level field (Ollama's decoder ignores it)."""


def either(camel: str, snake: str, kind: Any) -> Any:
    """A Gemini field under either spelling (the API reads both)."""
    return Annotated[kind, Field(validation_alias=AliasChoices(camel, snake))]


if TYPE_CHECKING:
    CONTRACTS: Mapping[str, RequestContract]
    """Provider -> its request contract, for every provider with an adapter (`contract`)."""
else:

    def __getattr__(name: str) -> Mapping[str, RequestContract]:
        """`CONTRACTS`, read from the facts rows when asked for (`contract`)."""
        if name == "CONTRACTS":
            from .. import names

            return MappingProxyType({provider: contract(provider) for provider in names()})
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def contract(provider: str) -> RequestContract:
    """The provider's contract, its facts row's `contract` (`ProviderFacts.contract`);
    UnknownAdapterError for a provider without an adapter."""
    from .. import get, names  # here: the adapters' rows import this module

    if provider not in names():
        raise UnknownAdapterError(
            f"no request contract for {provider!r}", hint=f"one of: {', '.join(names())}"
        )
    return get(provider).facts.contract


def _load(shape: str) -> type:
    from importlib import import_module

    module, _, name = shape.partition(":")
    kind: type = getattr(import_module(module), name)
    return kind


def _non_null(kind: Any) -> Any:
    """`kind` without None: a field the provider requires is never null."""
    origin = get_origin(kind)
    if origin is Annotated:
        inner, *meta = get_args(kind)
        return Annotated[(_non_null(inner), *meta)]
    if origin in (Union, UnionType):
        args = [a for a in get_args(kind) if a is not NoneType]
        out: Any = args[0]
        for arg in args[1:]:
            out = out | arg
        return out
    return kind


def _is_required(kind: Any, total: bool) -> bool:
    origin = get_origin(kind)
    return origin is Required or (total and origin is not NotRequired)


def _bare(kind: Any) -> Any:
    """`kind` without its Required/NotRequired marker."""
    return get_args(kind)[0] if get_origin(kind) in (Required, NotRequired) else kind


@cache
def strict_shape(provider: str) -> type:
    """The provider's contract as a TypedDict: the adapter's shape, differences applied
    (see module doc), extra top-level fields forbidden."""
    row = contract(provider)
    declared = _load(row.shape)
    hints = get_type_hints(declared, include_extras=True)
    # Read from the markers, not `__required_keys__`: under postponed annotations the
    # class cannot see a NotRequired inside its string annotations (pydantic can).
    total = getattr(declared, "__total__", True)
    required = {name for name, kind in hints.items() if _is_required(kind, total)} | row.required
    fields: dict[str, Any] = {}
    for name, kind in {**hints, **row.accepted}.items():
        if name in row.refused:
            continue
        bare = _bare(kind)
        fields[name] = Required[_non_null(bare)] if name in required else NotRequired[bare]
    make: Any = TypedDict  # the functional form, with fields known only at run time
    strict: type = make(f"{provider.title()}RequestContract", fields)
    config = ConfigDict(**cast(ConfigDict, getattr(declared, "__pydantic_config__", None) or {}))
    config["extra"] = "forbid"
    strict.__pydantic_config__ = config  # type: ignore[attr-defined]
    return strict


def _others(name: str, provider: str) -> list[str]:
    """The other providers whose request has a top-level field `name`."""
    from .. import names

    return [p for p in names() if p != provider and name in known_fields(p)]


@cache
def known_fields(provider: str) -> frozenset[str]:
    """The top-level request fields `provider` takes."""
    return frozenset(get_type_hints(strict_shape(provider)))


def check_request(provider: str, body: Any) -> list[FieldProblem]:
    """What `provider` would refuse in the request `body` (empty when it keeps to the contract)."""
    strict = strict_shape(provider)
    try:
        reader.shape(cast(Hashable, strict)).validate_python(body)
    except ValidationError as exc:
        return _merged([_problem(provider, path, error) for path, error in reader.located(exc, body)])
    except RecursionError:
        return [FieldProblem("", f"the {provider} request is nested too deeply to check")]
    return []


def _merged(problems: list[FieldProblem]) -> list[FieldProblem]:
    """One problem per path: a union's branches each fail at the same field, and the reader
    wants "a valid boolean or a valid string", not two lines."""
    by_path: dict[tuple[str, str | None], list[str]] = {}
    for problem in problems:
        texts = by_path.setdefault((problem.path, problem.rule), [])
        if problem.problem not in texts:
            texts.append(problem.problem)
    return [FieldProblem(path, " or ".join(texts), rule=rule) for (path, rule), texts in by_path.items()]


def _problem(provider: str, path: str, error: Mapping[str, Any]) -> FieldProblem:
    kind = error["type"]
    if kind == "missing":
        return FieldProblem(path, f"required by {provider}", rule="required")
    if kind == "extra_forbidden":
        what = "ignored by" if contract(provider).unknown == "ignored" else "not accepted by"
        others = _others(path, provider)
        of = f" (a field of the {', '.join(others)} request)" if others else ""
        return FieldProblem(path, f"unknown field, {what} {provider}{of}", rule="known-fields")
    return FieldProblem(path, str(error["msg"]), rule="type")


__all__ = [
    "CONTRACTS",
    "Json",
    "Number",
    "RequestContract",
    "check_request",
    "contract",
    "either",
    "known_fields",
    "strict_shape",
]
