"""Request options: the one rule every adapter and `metis convert` follow.

An option either has a canonical meaning or belongs to one provider:

- **Canonical** options (`AdapterOptions.max_tokens`, `temperature`, `top_p`, `stop`,
  `tool_choice` by meaning, `thinking_budget`, `output_schema`) are read by each importer
  into those fields and written by each `to_wire` in its provider's own spelling (the
  facts row says where, `ProviderFacts.options` and `.output_schema`).
- **Provider-only** options (everything else a request sets besides its messages and
  tools: `logit_bias`, `seed`, Gemini's `safetySettings`, Ollama's `keep_alive`, the parts
  of a canonical field's object that carry no canonical meaning, ...) are kept under their
  provider's name in `AdapterOptions.provider_options`. `to_wire` merges the entry of its
  own provider into the body and reports every other provider's options as dropped, one
  §7.3 WARN per option path (`block_type="option"`), so nothing another provider asked for
  leaks into a body and nothing is lost without a record.

An importer starts from `option_fields(body, content)`: the body without its messages and
tools. Each canonical reader `take`s the parts it understands out of that dict; what is
left is the provider-only remainder. Because replay deep-merges the remainder over what
the writer built from the canonical fields, a recorded request replays to its own
provider as sent, even where a canonical field's object carries extra keys (Anthropic's
`tool_choice.disable_parallel_tool_use`, Gemini's `generationConfig.topK`).

`AdapterOptions.extra` is different: the caller's own fields for the target it is
calling, merged last (after the provider's entry), whatever that target is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._lossy import warn_loss

if TYPE_CHECKING:
    from .base import AdapterOptions

NOT_OPTIONS = frozenset({"model", "stream"})
"""Top-level fields that are never options: the model is the target's own, and whether a
request streams is the client's decision (`AdapterOptions.stream`), not a carried knob."""


@dataclass(frozen=True)
class OutputSchema:
    """Structured output: the reply must be JSON valid against `schema` (canonical option).

    `name` and `strict` go where a provider wants them (OpenAI Chat and Responses require a
    name, so one is always there); providers without those fields carry the schema alone."""

    schema: dict[str, Any]
    """The JSON Schema the reply must satisfy."""
    name: str = "output"
    """The schema's name (OpenAI `json_schema.name`, Responses `text.format.name`)."""
    strict: bool | None = None
    """OpenAI's strict mode; None leaves it to the provider's default."""
    description: str | None = None
    """What the output is for (OpenAI's `description`), where a provider takes one."""


def option_fields(body: Mapping[str, Any], content: Iterable[str]) -> dict[str, Any]:
    """The request's option fields: every top-level field except the `content` fields an
    importer maps itself (messages, tools, system) and `NOT_OPTIONS`. A new top-level dict;
    `take` copies the objects it changes, so the recorded body is never modified (and
    nothing is copied that is not changed: a value nested thousands deep costs nothing)."""
    skip = NOT_OPTIONS.union(content)
    return {key: value for key, value in body.items() if key not in skip}


def at(fields: Mapping[str, Any], path: str) -> Any:
    """The value at dotted `path` of `fields` (None when absent or the path breaks off)."""
    value: Any = fields
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def take(fields: dict[str, Any], path: str) -> Any:
    """Remove and return the value at dotted `path` of `fields` (None when absent), pruning
    objects the removal leaves empty; the objects on the path are copied, not changed."""
    *parents, last = path.split(".")
    holder = at(fields, ".".join(parents)) if parents else fields
    if not isinstance(holder, dict) or last not in holder:  # an absent path changes nothing
        return None
    chain = [fields]
    for key in parents:
        chain[-1][key] = inner = dict(chain[-1][key])
        chain.append(inner)
    value = chain[-1].pop(last)
    for outer, key in reversed(list(zip(chain, parents, strict=False))):
        if outer[key]:
            break
        del outer[key]
    return value


def put(fields: dict[str, Any], path: str, value: Any) -> None:
    """Set dotted `path` of `fields` to `value`, copying the objects on the path."""
    *parents, last = path.split(".")
    holder = fields
    for key in parents:
        inner = holder.get(key)
        holder[key] = inner = dict(inner) if isinstance(inner, dict) else {}
        holder = inner
    holder[last] = value


def merge(body: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Deep-merge `fields` into `body`: objects merge key by key (the ones merged into are
    copied first, so neither side's objects change), anything else replaces."""
    for key, value in fields.items():
        held = body.get(key)
        if isinstance(held, dict) and isinstance(value, Mapping):
            body[key] = held = dict(held)
            merge(held, value)
        else:
            body[key] = value


def paths(fields: Mapping[str, Any]) -> Iterator[str]:
    """The dotted path of every leaf of `fields` (objects are walked, lists are leaves);
    walked with a stack, so any depth a JSON body can have is fine."""
    stack: list[tuple[str, Mapping[str, Any]]] = [("", fields)]
    while stack:
        prefix, value = stack.pop()
        for key, inner in value.items():
            path = f"{prefix}{key}"
            if isinstance(inner, Mapping) and inner:
                stack.append((f"{path}.", inner))
            else:
                yield path


def own_fields(options: AdapterOptions, provider: str) -> dict[str, Any]:
    """The fields `provider`'s `to_wire` merges into its body, last: this provider's entry of
    `provider_options`, then the caller's `extra` over it. Every other provider's entry is
    reported as dropped here (one WARN per option path, spec §7.3): call it once per body."""
    fields: dict[str, Any] = {}
    for owner, entry in options.provider_options.items():
        if owner == provider:
            merge(fields, entry)
            continue
        for path in paths(entry):
            reason = _not_sent(path, owner)
            warn_loss(
                adapter=provider,
                session_id=options.session_id,
                message_id=None,
                block_type="option",
                reason=reason,
                text=f"not sent to {provider}: {reason}",
            )
    merge(fields, options.extra)
    return fields


def _not_sent(path: str, owner: str) -> str:
    """Why `path` of `owner`'s `provider_options` entry is not sent to another provider, in
    words: an option set for `owner` (by the caller or an imported request), or, under the
    reserved directives key, what metis kept of `owner`'s request for its replay."""
    from ._shared import DIRECTIVES  # _shared imports this module

    if path.startswith(f"{DIRECTIVES}."):
        name = path.removeprefix(f"{DIRECTIVES}.")
        return (
            f"{path} (the {name} of the {owner} request, which no canonical field holds: "
            f"kept by metis to replay it) goes back to {owner} only"
        )
    return f"{path} ({owner}'s own option) goes to {owner} only"


def dropped_options(options: AdapterOptions, provider: str) -> list[str]:
    """`owner:path` of every provider-only option a body for `provider` leaves out (what
    `own_fields` reports), for a conversion report."""
    return [
        f"{owner}:{path}"
        for owner, entry in options.provider_options.items()
        if owner != provider
        for path in paths(entry)
    ]


__all__ = [
    "NOT_OPTIONS",
    "OutputSchema",
    "at",
    "dropped_options",
    "merge",
    "option_fields",
    "own_fields",
    "paths",
    "put",
    "take",
]
