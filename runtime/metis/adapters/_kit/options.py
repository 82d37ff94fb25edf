"""Request options: the one rule every adapter and `metis convert` follow.

An option either has a canonical meaning or belongs to one provider:

- **Canonical** options (`AdapterOptions.max_tokens`, `temperature`, `top_p`, `stop`,
  `tool_choice` by meaning, `thinking_budget`, `reasoning_effort`, `output_schema`) are
  read by each importer into those fields and written by each `to_wire` in its provider's
  own spelling (the facts row says where, `ProviderFacts.options` and `.output_schema`;
  a field read under another name, OpenAI Chat's deprecated `max_tokens`, is an alias of
  the row and replays under the name it came in, `ProviderFacts.option_aliases`).
- **Reasoning** has two canonical options, kept apart: `reasoning_effort`, a level by
  meaning (OpenAI Chat `reasoning_effort`, Responses and OpenRouter `reasoning.effort`,
  Mistral `reasoning_effort`, Anthropic `output_config.effort`, Gemini
  `thinkingConfig.thinkingLevel`), sent as the nearest level a provider has
  (`ProviderFacts.efforts`, WARN when not exact); and `thinking_budget`, a token count
  (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`, OpenRouter
  `reasoning.max_tokens`). Neither is derived from the other: no provider documents a
  budget for a level it accepts (OpenRouter documents how its router turns an effort into
  an upstream's budget, as a share of max_tokens; that is its routing, not a meaning metis
  restates), so a target without a field for one reports it not sent, and a target that
  takes one of the two per request (OpenRouter, Gemini) gets the budget, the effort
  reported (`ProviderFacts.effort_or_budget`). Ollama's `think` takes levels for some
  models only and stays provider-only.
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

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from metis_schema.v3 import ReasoningEffort

from ... import _json
from ...errors import AdapterError, WireFormatError
from ...ids import ToolIdMap
from ...workspace import DEFAULT_MAX_MEDIA_BYTES
from .losses import Losses

if TYPE_CHECKING:
    from .facts import ProviderFacts

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


EFFORT_LEVELS: tuple[str, ...] = tuple(level.value for level in ReasoningEffort)
"""The canonical reasoning-effort levels, least to most (the schema's `ReasoningEffort`)."""


@dataclass
class AdapterOptions:
    """Request options that are not messages or tools (the rule: `adapters/_kit/options.py`).

    `model` is a canonical id or alias (resolved through the catalog to the wire name).
    Options with a canonical meaning have fields here (`max_tokens` ... `output_schema`;
    `tool_choice` by meaning: "auto", "any", "none" or a tool's name), which every adapter
    writes in its provider's spelling. Options of one provider only live in
    `provider_options[provider]`: an importer fills its own provider's entry with what the
    recorded request set beyond the canonical fields, and `to_wire` replays that entry to
    the same provider only, reporting any other provider's entry as dropped (spec §7.3).
    `extra` holds the caller's own knobs for the provider it is calling (spec §2.2.2),
    merged into the body last, e.g. `{"reasoning": {"effort": "high"}}` for OpenRouter or
    `{"keep_alive": "5m"}` for Ollama, and `extra["metis"]` directives to the adapter itself.
    `stream` is the client's choice for this request, never a carried option.
    """

    model: str
    session_id: str
    tool_ids: ToolIdMap
    workspace: Path | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    stream: bool = False
    tool_choice: str | None = None
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
    """How hard the model should reason, by meaning: a `ReasoningEffort` level ("none" ...
    "xhigh"), written as the nearest level each provider has (`ProviderFacts.efforts`).
    Separate from `thinking_budget`: neither is derived from the other (`options`)."""
    output_schema: OutputSchema | None = None
    """Structured output: the reply must be JSON valid against this schema."""
    provider_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Provider name -> that provider's own request fields (nested as on its wire), replayed
    to it alone; see the class docstring."""
    extra: dict[str, Any] = field(default_factory=dict)
    allow_url_fetch: bool = False
    """Opt-in: fetch image URLs a provider cannot take by reference (Ollama)."""
    url_fetcher: Callable[[str], bytes] | None = None
    """The fetcher to use; None means `metis.fetch.UrlFetcher()` (public http(s) only)."""
    max_media_bytes: int = DEFAULT_MAX_MEDIA_BYTES
    """Largest file_ref read from the workspace (`metis.workspace`)."""
    endpoint: str | None = None
    """The base URL the request goes to (`metis.endpoints`), None for the provider's own
    default API: opaque reasoning goes back only to the endpoint that produced it
    (`provenance.replays_opaque`)."""
    max_event_chars: int | None = None
    """Largest single stream event (a line, an SSE event's data, an array element) the
    reply's stream may send; past it the stream fails with StreamLimitError. None means
    `adapters._kit.framing.DEFAULT_MAX_EVENT_CHARS`."""

    _SENT: ClassVar[tuple[str, ...]] = (
        "model",
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "tool_choice",
        "thinking_budget",
        "reasoning_effort",
        "provider_options",
        "extra",
    )
    """The fields whose values go into the request body as they are."""

    def __post_init__(self) -> None:
        """The values a body will carry must be JSON: a NaN or infinite temperature, a stop
        string with a lone surrogate, an option of 4,400 digits are refused here, as they
        enter (NotJsonError naming the option and the place), so a send with one fails
        before the client stores the user's message or sends anything. Let into a body,
        they failed as untyped errors wherever the body was written."""
        for name in self._SENT:
            _json.refuse_unwritable(getattr(self, name), f"request option {name}")
        if self.reasoning_effort is not None and self.reasoning_effort not in EFFORT_LEVELS:
            raise AdapterError(
                f"reasoning_effort {self.reasoning_effort!r} is not a reasoning effort level",
                path="options.reasoning_effort",
                hint=f"one of {', '.join(EFFORT_LEVELS)}",
            )
        if self.output_schema is not None:
            _json.refuse_unwritable(vars(self.output_schema), "request option output_schema")


DIRECTIVES = "metis"
"""The key of `AdapterOptions.extra` (and of a provider's `provider_options` entry, where an
import records how the request was shaped) holding directives to an adapter (never sent)."""
SPELLED = "spelled"
"""The directive of an import's messages spelled other than the writer spells them: message
id -> that message's spelling (each adapter's own keys: string content, a data-URL image...),
keyed by id so it follows the message through edits and appended turns, and never rides on
the message itself (a stored message stays as any other)."""
OPTION_PATHS = "option_paths"
"""The directive of an import's canonical options read under an alias of its row
(`ProviderFacts.option_aliases`): option -> the path it was read at, where the writer puts
it again (`ProviderFacts.options_to_wire`'s `spelled`)."""
SPELLING_ONLY = frozenset(
    {SPELLED, OPTION_PATHS, "spelling", "stateless", "stream_sent", "stream_usage", "tool_names"}
)
"""Directives an import records about how its request was spelled and nothing more (a
snake_case field, `stream` left to its default, fields the writer would add): replayed to
their provider, and not reported when the entry goes elsewhere, where nothing is lost.

`option_paths` is the name a canonical option's value was read under (OpenAI Chat's
deprecated `max_tokens` for `max_completion_tokens`): the value itself is the canonical
field (`AdapterOptions.max_tokens`), which every target writes in its own spelling, or,
where the target has no field for it, reports as not sent (`ProviderFacts.options_to_wire`).
So the value's loss is reported where it happens, and the spelling alone is no loss."""
SYSTEM_ROLES = ("system", "developer")
"""How OpenAI-family wires may name the system role (`metis.system_role` picks one)."""


def split_directives(options: AdapterOptions, provider: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metis directives, the rest of the fields to merge into `provider`'s body), the
    directives' shared keys checked; the fields are `options.own_fields` (this provider's
    `provider_options` entry, then `extra`; other providers' entries reported as dropped).

    Chat Completions and Responses read the same `metis` directives; each adapter checks
    the keys only it knows after this."""
    fields = own_fields(options, provider)
    directives = fields.pop(DIRECTIVES, None) or {}
    if not isinstance(directives, dict):
        raise WireFormatError(
            "options.extra['metis'] must be a dict of adapter directives", path="extra.metis"
        )
    role = directives.get("system_role", "system")
    if role not in SYSTEM_ROLES:
        raise WireFormatError(
            f"system_role must be 'system' or 'developer', not {role!r}", path="extra.metis.system_role"
        )
    return directives, fields


def spelled(options: AdapterOptions, provider: str) -> dict[str, Any]:
    """The `SPELLED` directive `provider`'s writer reads (`directive`)."""
    return directive(options, provider, SPELLED)


def directive(options: AdapterOptions, provider: str, name: str) -> dict[str, Any]:
    """The object directive `name` (`SPELLED`, `OPTION_PATHS`) of `provider`'s own entry,
    the caller's `extra` over it, for a writer that needs it before the body's fields are
    merged (`split_directives` reports other providers' options, once per body): reports
    nothing."""
    out: dict[str, Any] = {}
    for source in (options.provider_options.get(provider) or {}, options.extra):
        found = (source.get(DIRECTIVES) or {}).get(name) if isinstance(source, Mapping) else None
        if isinstance(found, dict):
            out.update(found)
    return out


def option_fields(body: Mapping[str, Any], content: Iterable[str]) -> dict[str, Any]:
    """The request's option fields: every top-level field except the `content` fields an
    importer maps itself (messages, tools, system) and `NOT_OPTIONS`. A new top-level dict;
    `take` copies the objects it changes, so the recorded body is never modified (and
    nothing is copied that is not changed: a value nested thousands deep costs nothing)."""
    skip = NOT_OPTIONS.union(content)
    return {key: value for key, value in body.items() if key not in skip}


def imported_options(
    body: Mapping[str, Any],
    fields: dict[str, Any],
    facts: ProviderFacts,
    *,
    model: str,
    session_id: str,
    tool_ids: ToolIdMap,
    directives: dict[str, Any],
    stream: bool | None = None,
    read: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
) -> AdapterOptions:
    """The rule above for an imported request, every importer's one way to its options: the
    canonical options taken out of its option `fields` through `facts` (the tool choice at
    the row's `tool_choice_field`, the output schema, the row's option paths and aliases);
    what is left, with the importer's `directives` (and the aliases options were read under,
    `option_paths`, which its writer sends them under again), is the provider's own entry of
    `provider_options`, replayed to it alone.

    `stream` is whether the request streamed where the body does not say it as a boolean
    `stream` (None: `body["stream"] is True`, as Chat, Responses and Anthropic send it;
    Ollama streams unless told otherwise, Gemini says it in the URL). `read` is the
    importer's own step between the row's takes and the options, called with the option
    fields and the canonical values found: it may take further canonical values out of
    the fields (Anthropic's enabled thinking budget), refuse what is left (a tool choice
    that means nothing), or take out what its writer derives from a value found (Gemini's
    `includeThoughts`)."""
    spelled: dict[str, str] = {}
    found: dict[str, Any] = {
        "tool_choice": facts.take_tool_choice(fields),
        "output_schema": facts.take_output_schema(fields),
        **facts.take_options(fields, spelled),
    }
    if read is not None:
        read(fields, found)
    options = AdapterOptions(
        model=model,
        session_id=session_id,
        tool_ids=tool_ids,
        stream=body.get("stream") is True if stream is None else stream,
        **found,
    )
    if spelled:  # an option read under an alias (`max_tokens`) replays under it
        directives[OPTION_PATHS] = spelled
    if directives:
        fields[DIRECTIVES] = directives
    if fields:
        options.provider_options[facts.provider] = fields
    return options


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
    losses = Losses(provider, options.session_id)
    for owner, entry in options.provider_options.items():
        if owner == provider:
            merge(fields, entry)
            continue
        for path in _carried(entry):
            losses.request("option", _not_sent(path, owner), at=f"option {path}")
    merge(fields, options.extra)
    return fields


def _not_sent(path: str, owner: str) -> str:
    """Why `path` of `owner`'s `provider_options` entry is not sent to another provider, in
    words: an option set for `owner` (by the caller or an imported request), or, under the
    reserved directives key, what metis kept of `owner`'s request for its replay."""
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
        for path in _carried(entry)
    ]


def _carried(entry: Mapping[str, Any]) -> list[str]:
    """The option paths of a provider's entry that say something (not `SPELLING_ONLY`)."""
    spelled = tuple(f"{DIRECTIVES}.{name}" for name in SPELLING_ONLY)
    return [path for path in paths(entry) if not any(path == s or path.startswith(f"{s}.") for s in spelled)]


__all__ = [
    "NOT_OPTIONS",
    "OPTION_PATHS",
    "SPELLED",
    "SPELLING_ONLY",
    "OutputSchema",
    "at",
    "directive",
    "dropped_options",
    "imported_options",
    "merge",
    "option_fields",
    "own_fields",
    "paths",
    "put",
    "spelled",
    "take",
]
