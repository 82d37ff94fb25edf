"""Provider facts as data: one row per provider or dialect, read by shared code.

What differs between providers but is not logic — the stop-reason vocabulary, where an
error envelope keeps its type and message, which error types and statuses are worth a
retry, how a tool choice is spelled, and which body field each canonical option goes to —
is declared here once per provider (`ProviderFacts`) and interpreted by the base adapter.
Inverse tables (wire tool choice -> canonical meaning) are derived, never kept by hand.

The option rows are read both ways: a writer puts each canonical option where its row says,
an importer `take`s it back out of the request's option fields (`options.option_fields`),
so whatever a row does not cover stays behind as the provider-only remainder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from metis_schema.v3 import StopReason, Usage

from ... import _json
from ..._times import READERS
from ...errors import AdapterError, ProviderError, retryable_status
from ...usage import CounterRule
from ...validation import field_path
from .detect import RequestMarks
from .estimate import TokenRow
from .losses import REQUEST, warn_loss
from .options import EFFORT_LEVELS, OutputSchema, merge, put, take

TOOL_NAME = "\x00tool-name\x00"
"""Placeholder for the tool's name inside a `ProviderFacts.tool_choice["tool"]` template."""
SCHEMA = "\x00schema\x00"
"""Placeholder for `OutputSchema.schema` inside a `ProviderFacts.output_schema` template."""
SCHEMA_NAME = "\x00schema-name\x00"
"""Placeholder for `OutputSchema.name` (left out of a template for a provider without one)."""
SCHEMA_STRICT = "\x00schema-strict\x00"
"""Placeholder for `OutputSchema.strict` (written only when set)."""
SCHEMA_DESCRIPTION = "\x00schema-description\x00"
"""Placeholder for `OutputSchema.description` (written only when set)."""

_SCHEMA_SLOTS: dict[str, tuple[str, type]] = {
    SCHEMA: ("schema", dict),
    SCHEMA_NAME: ("name", str),
    SCHEMA_STRICT: ("strict", bool),
    SCHEMA_DESCRIPTION: ("description", str),
}
"""Each output-schema placeholder: the OutputSchema field it stands for, and the JSON type a
recorded value must have to be read as that field."""

_EXCERPT = 500

_LEAST: Mapping[str, int] = {"max_tokens": 1, "thinking_budget": 0}
"""The least integer each counted canonical option may be (the schema's RequestOptions
minimums): a recorded value below it means something else on its wire (Gemini's
`thinkingBudget: -1` is "automatic") and stays provider-only."""

EFFORT_SAME: Mapping[str, str] = {level: level for level in EFFORT_LEVELS}
"""A provider that names every canonical level as the schema does (OpenAI's `ReasoningEffort`,
OpenRouter's `reasoning.effort`, Mistral's `ReasoningEffort`: each also has levels of its own,
such as "max", which stay provider-only)."""


class ToolChoice(StrEnum):
    """What a tool choice means, whatever a provider calls it."""

    auto = "auto"
    """The model decides whether to call a tool."""
    any = "any"
    """The model must call some tool (OpenAI's "required", Anthropic's "any", Gemini's ANY)."""
    none = "none"
    """The model must not call a tool."""
    tool = "tool"
    """The model must call the one named tool."""


_ALIASES = {"required": ToolChoice.any}


def tool_choice_meaning(value: str | None) -> tuple[ToolChoice, str | None] | None:
    """`AdapterOptions.tool_choice` by meaning: a mode, or (`tool`, its name) for any other value."""
    if value is None:
        return None
    if value in _ALIASES:
        return _ALIASES[value], None
    if value in ToolChoice.__members__ and value != ToolChoice.tool:
        return ToolChoice(value), None
    return ToolChoice.tool, value


@dataclass(frozen=True)
class ErrorEnvelope:
    """Where a provider's error body keeps its type and message (paths of keys from the root).

    `kinds` classifies a provider that only sends text (Ollama): the first pattern found in
    the message names the type and says whether it is worth a retry.
    """

    type_at: tuple[str, ...] = ()
    message_at: tuple[str, ...] = ("error", "message")
    also_at: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Further fields appended to the message as `name value` (a request id, upstream text)."""
    kinds: tuple[tuple[str, str, bool], ...] = ()
    """(regex, error type, retryable) tried in order against the message."""


@dataclass(frozen=True)
class ProviderFacts:
    """One provider's (or dialect's) facts; see the module docstring."""

    provider: str
    stop_reasons: Mapping[str, StopReason]
    """Wire stop value -> canonical; anything else is `other` (the raw value stays in provider_raw)."""
    error: ErrorEnvelope
    retryable_types: frozenset[str] = frozenset()
    """Error types worth another attempt, whatever the HTTP status."""
    never_retry_types: frozenset[str] = frozenset()
    """Error types never retried, even when the status would say so."""
    tool_choice: Mapping[ToolChoice, Any] = field(default_factory=dict)
    """Canonical meaning -> wire value; `tool` is a template holding `TOOL_NAME` where the name goes.
    A meaning missing here cannot be said to this provider (the request leaves it out, logged)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Canonical option (`max_tokens`, `temperature`, `top_p`, `stop`, `reasoning_effort`, and
    `thinking_budget` where it is one number) -> dotted body path. A canonical option handed
    to `options_to_wire` that has no path here is reported there as not sent (§7.3)."""
    option_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Canonical option -> further body paths an import reads as that option (OpenAI Chat's
    deprecated `max_tokens` beside `max_completion_tokens`). The path a request used is
    returned by `take_options` (`spelled`) and, handed back to `options_to_wire`, is where the
    value goes again, so a recorded request replays to its provider as sent. The importer
    keeps it as the `option_paths` directive (`options.DIRECTIVES`): only rows whose writer
    reads directives (Chat Completions, Responses) declare aliases."""
    efforts: Mapping[str, str] = field(default_factory=dict)
    """Canonical reasoning-effort level -> this provider's value, for the levels it has (the
    `reasoning_effort` path in `options` says where). A level it lacks goes as the nearest
    one it has (`nearest_effort`), with a WARN naming both; a wire value not listed here (a
    provider's own "max") stays provider-only."""
    effort_or_budget: bool = False
    """The provider takes a reasoning effort or a thinking budget in one request, not both
    (OpenRouter: "use one of effort or max_tokens"; Gemini: thinkingLevel or thinkingBudget):
    given both, the budget, the more exact of the two, is sent and the effort reported."""
    output_schema: Mapping[str, Any] = field(default_factory=dict)
    """Where `AdapterOptions.output_schema` goes: a body fragment holding `SCHEMA` (and
    `SCHEMA_NAME`, `SCHEMA_STRICT`, `SCHEMA_DESCRIPTION` where the provider takes them).
    Every provider here has one; a row without it leaves the option out."""
    file_ids_from: frozenset[str] = frozenset()
    """The providers whose file ids (`MediaSource` kind `file_id`, named by its `provider`)
    this one reads: its own Files API, and any provider sharing it (OpenAI's Chat
    Completions and Responses read the same uploads). Empty: it takes no file ids. Any
    other provider's file id means nothing here and is dropped (§7.3)."""

    reply_stop_reasons: Mapping[StopReason, str] = field(default_factory=dict)
    """Canonical stop reason -> the value a reply written for this API's clients says, for
    reasons the API has no value of its own for (the nearest it has; `stop_reason_to_wire`)."""
    reply_stop_default: str = ""
    """What a reply says when no stop reason is known (`stop_reason_to_wire`)."""
    created_at: tuple[str, str] | None = None
    """Where a whole reply says when it was made: (its key, `iso` or `unix`, a reader of
    `metis._times`); None when the provider's replies do not say (Anthropic, Gemini). An
    imported reply is dated, and so priced, by it (`reply_time`)."""
    tokens: TokenRow | None = None
    """The numbers of the pre-flight token estimate (`estimate.estimate`, which the base
    adapter's `estimate_input_tokens` runs), with the error measured against this
    provider's usage counts; every registered provider has one."""
    usage: CounterRule | None = None
    """How this provider's usage object counts (`metis.usage.normalize_usage` looks it up
    here): where each count is, through which declared shape it is read, whether the prompt
    count includes the cache counts; every registered provider has one."""
    marks: RequestMarks | None = None
    """What marks this provider's request bodies and replies (`detect`: which format a JSON
    body is, for `metis import`, `convert` and `validate`)."""

    def reply_time(self, reply: object) -> datetime | None:
        """When a whole reply body was made, as it says (see `created_at`); None when it
        does not, or says something that is no time."""
        if self.created_at is None or not isinstance(reply, Mapping):
            return None
        key, kind = self.created_at
        return READERS[kind](reply.get(key))

    def reported_prompt(self, counts: Usage | None) -> int:
        """The prompt count this provider's usage object states for canonical `counts` (its
        usage rule's `reported_prompt`): what a reply written in its format says."""
        if self.usage is None:
            raise AdapterError(
                f"{self.provider} has no usage rule (ProviderFacts.usage)", provider=self.provider
            )
        return self.usage.reported_prompt(counts)

    def reads_file_id(self, owner: str | None) -> bool:
        """Whether a file id uploaded to `owner` means something to this provider."""
        return owner is not None and owner in self.file_ids_from

    # --- stop reasons ---------------------------------------------------------------------

    def stop_reason(self, value: object) -> StopReason:
        """The canonical stop reason of a wire value (`other` for anything unknown)."""
        return self.stop_reasons.get(value, StopReason.other) if isinstance(value, str) else StopReason.other

    def stop_reason_to_wire(self, reason: StopReason | None) -> str:
        """A canonical stop reason as a reply of this provider says it (what `metis serve`
        writes for this API's clients): `reply_stop_reasons` where the reply's spelling is not
        the first one `stop_reasons` reads as that reason (the row lists the preferred
        spelling first), else that first one, else `reply_stop_default`."""
        if reason is None:
            return self.reply_stop_default
        if reason in self.reply_stop_reasons:
            return self.reply_stop_reasons[reason]
        return next(
            (wire for wire, meaning in self.stop_reasons.items() if meaning is reason),
            self.reply_stop_default,
        )

    # --- tool choice ----------------------------------------------------------------------

    def tool_choice_to_wire(self, value: str | None) -> Any:
        """The wire spelling of `AdapterOptions.tool_choice`; None when unset or not sayable here."""
        meaning = tool_choice_meaning(value)
        if meaning is None or meaning[0] not in self.tool_choice:
            return None
        mode, name = meaning
        return _fill(self.tool_choice[mode], name or "")

    def take_tool_choice(self, fields: dict[str, Any], path: str) -> str | None:
        """The canonical tool choice recorded at `path` of an import's option fields (the
        `tool_choice` table read backwards), taken out of them. Keys beside the meaning
        (Anthropic's `disable_parallel_tool_use`, Gemini's further `allowedFunctionNames`)
        stay behind, provider-only; a value that is not one of this row's spellings (a tool
        named "auto", Mistral's alias "required") stays whole."""
        wire = _get(fields, tuple(path.split(".")))
        if wire is None:
            return None
        modes = sorted(self.tool_choice.items(), key=lambda item: item[0] != ToolChoice.tool)
        for mode, template in modes:  # the named tool first: its template is the most specific
            meant = _restrict(template, wire)
            choice = (
                _match(template, meant)
                if mode == ToolChoice.tool
                else (mode.value if meant == template else None)
            )
            if choice is not None and self.tool_choice_to_wire(choice) == meant:
                _remove(fields, path, meant)
                return choice
        return None

    # --- options --------------------------------------------------------------------------

    def options_to_wire(
        self,
        values: Mapping[str, Any],
        body: dict[str, Any],
        *,
        session_id: str,
        spelled: Mapping[str, Any] | None = None,
    ) -> None:
        """Write each set canonical option of `values` at its declared body path (or at the
        alias path `spelled` names for it, where the row declares that alias); a reasoning
        effort in this provider's levels. What cannot be said here is one §7.3 WARN each: an
        option with no path in the row, an effort beside a budget where the provider takes
        one of the two, an effort level sent as the nearest one."""
        budget = values.get("thinking_budget") is not None and "thinking_budget" in self.options
        for option, given in values.items():
            if given is None:
                continue
            path = self.options.get(option)
            if path is None:
                self._unsaid(session_id, option, f"{option} has no {self.provider} request field; not sent")
                continue
            value = given
            if option == "reasoning_effort":
                if self.effort_or_budget and budget:
                    reason = (
                        f"{self.provider} takes a reasoning effort or a thinking budget, not both; "
                        f"the budget is sent, reasoning_effort {given} is not"
                    )
                    self._unsaid(session_id, option, reason)
                    continue
                value = self._effort(given, session_id)
                if value is None:
                    continue
            alias = spelled.get(option) if spelled else None
            put(body, alias if alias in self.option_aliases.get(option, ()) else path, value)

    def take_options(self, fields: dict[str, Any], spelled: dict[str, str] | None = None) -> dict[str, Any]:
        """The canonical options found at their declared paths (then at their aliases) of an
        import's option fields, taken out of them; the alias each was read at goes into
        `spelled`. A `stop` that is not a list of strings, a count below its canonical
        least (`_LEAST`: Gemini's "automatic" thinking budget -1), an effort that is none of this
        provider's levels, and an effort beside a budget where the provider takes one of the
        two (the writer would send the budget alone) stay provider-only, so the request
        replays as it was sent."""
        found: dict[str, Any] = {}
        levels = {wire: level for level, wire in self.efforts.items()}
        budget_at = self.options.get("thinking_budget")
        both = (
            self.effort_or_budget
            and budget_at is not None
            and _get(fields, tuple(budget_at.split("."))) is not None
        )
        for option, declared in self.options.items():
            if option == "reasoning_effort" and both:
                continue
            for path in (declared, *self.option_aliases.get(option, ())):
                value = _get(fields, tuple(path.split(".")))
                if value is None or (option == "stop" and not _strings(value)) or not _counted(option, value):
                    continue
                if option == "reasoning_effort":
                    if not isinstance(value, str) or value not in levels:
                        break
                    take(fields, path)
                    found[option] = levels[value]
                else:
                    found[option] = take(fields, path)
                if path != declared and spelled is not None:
                    spelled[option] = path
                break
        return found

    def nearest_effort(self, level: str) -> str | None:
        """The level this provider has nearest to canonical `level` (the lower of two as
        near): None for a provider without levels or a value that is no canonical level."""
        if level not in EFFORT_LEVELS or not self.efforts:
            return None
        if level in self.efforts:
            return level
        at = EFFORT_LEVELS.index(level)
        rank = EFFORT_LEVELS.index
        return min(self.efforts, key=lambda have: (abs(rank(have) - at), rank(have)))

    def _effort(self, level: str, session_id: str) -> str | None:
        nearest = self.nearest_effort(level)
        if nearest is None:
            self._unsaid(session_id, "reasoning_effort", f"{level!r} is no reasoning effort level; not sent")
            return None
        if nearest != level:
            reason = f"{self.provider} has no {level} reasoning effort; sent as the nearest level, {nearest}"
            self._unsaid(session_id, "reasoning_effort", reason)
        return self.efforts[nearest]

    def _unsaid(self, session_id: str, option: str, reason: str) -> None:
        """One §7.3 WARN for an option this request cannot say as asked (no message to name)."""
        warn_loss(
            adapter=self.provider,
            session_id=session_id,
            message_id=REQUEST,
            block_type="option",
            reason=reason,
            text=f"{self.provider}: option {option}: {reason}",
        )

    def output_schema_to_wire(self, value: OutputSchema | None, body: dict[str, Any]) -> None:
        """Write a structured-output schema where this provider takes it."""
        if value is not None and self.output_schema:
            merge(body, _fill_schema(self.output_schema, value))

    def take_output_schema(self, fields: dict[str, Any]) -> OutputSchema | None:
        """The structured-output schema an import's option fields state in this provider's
        spelling, taken out of them; anything else there (JSON mode without a schema, a
        provider's own schema dialect) stays, provider-only."""
        if not self.output_schema:
            return None
        found: dict[str, Any] = {}
        if not _capture(self.output_schema, fields, found) or "schema" not in found:
            return None
        rest = _without(fields, self.output_schema)
        fields.clear()
        fields.update(rest)
        return OutputSchema(**found)

    # --- errors ---------------------------------------------------------------------------

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        """A provider error body (bytes, text or parsed) -> ProviderError with its own type and message.

        Never raises: whatever the body holds, the error it reports is built. A body that is
        not JSON, or holds what JSON cannot carry (a lone surrogate, NaN, an integer past
        4,300 digits, nesting past the writer's bound; `_parsed`), is reported by its text
        excerpt, which names what is wrong with it and is safe to print, log and store."""
        parsed = _parsed(body)
        if parsed is None and not isinstance(body, bytes):
            body = _json.printable(body) if isinstance(body, str) else _excerpt(body)
        envelope = self.error
        message = _get(parsed, envelope.message_at) if envelope.message_at else None
        error_type = _get(parsed, envelope.type_at) if envelope.type_at else None
        if message is None and isinstance(parsed, Mapping) and isinstance(parsed.get("error"), str):
            message = parsed["error"]
        text = _text(message) if message is not None else _excerpt(body)
        retryable: bool | None = None
        if error_type is None:
            for pattern, kind, retry in envelope.kinds:
                if re.search(pattern, text, re.IGNORECASE):
                    error_type, retryable = kind, retry
                    break
        kind_text = _text(error_type) if error_type is not None else None
        if not kind_text:
            kind_text = f"http_{status_code}" if status_code else "unknown_error"
        for name, at in envelope.also_at.items():
            extra = _get(parsed, at)
            if extra is not None:
                text = f"{text} ({name} {_text(extra)})"
        if retryable is None:
            retryable = kind_text not in self.never_retry_types and (
                kind_text in self.retryable_types or retryable_status(status_code)
            )
        return ProviderError(
            text,
            provider=self.provider,
            error_type=kind_text,
            status_code=status_code,
            retryable=retryable,
            body=parsed if parsed is not None else body,
        )


def _fill(template: Any, name: str) -> Any:
    if template == TOOL_NAME:
        return name
    if isinstance(template, Mapping):
        return {key: _fill(value, name) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill(value, name) for value in template]
    return template


def _match(template: Any, wire: Any) -> str | None:
    """The name `wire` puts where `template` has TOOL_NAME, if the rest is the same."""
    if template == TOOL_NAME:
        return wire if isinstance(wire, str) and wire else None
    if isinstance(template, Mapping):
        if not isinstance(wire, Mapping) or set(template) - set(wire):
            return None
        names = [_match(value, wire[key]) for key, value in template.items() if _holds_name(value)]
        same = all(wire[key] == value for key, value in template.items() if not _holds_name(value))
        return names[0] if same and len(names) == 1 else None
    if isinstance(template, list):
        if not isinstance(wire, list) or len(wire) != len(template):
            return None
        names = [_match(t, w) for t, w in zip(template, wire, strict=True) if _holds_name(t)]
        same = all(t == w for t, w in zip(template, wire, strict=True) if not _holds_name(t))
        return names[0] if same and len(names) == 1 else None
    return None


def _holds_name(template: Any) -> bool:
    if template == TOOL_NAME:
        return True
    if isinstance(template, Mapping):
        return any(_holds_name(value) for value in template.values())
    if isinstance(template, list):
        return any(_holds_name(value) for value in template)
    return False


def _restrict(template: Any, wire: Any) -> Any:
    """`wire` cut down to the keys `template` has (objects only): the part a meaning covers."""
    if isinstance(template, Mapping) and isinstance(wire, Mapping):
        return {key: _restrict(value, wire[key]) for key, value in template.items() if key in wire}
    return wire


def _remove(fields: dict[str, Any], path: str, part: Any) -> None:
    """Take `part` (a `_restrict`ed view) out of the value at `path`; what is left of it stays."""
    value = take(fields, path)
    if isinstance(part, Mapping) and isinstance(value, Mapping):
        rest = _without(value, part)
        if rest:
            put(fields, path, rest)


def _without(value: Mapping[str, Any], part: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `value` without what `part` covers (objects emptied by it left out too)."""
    out = dict(value)
    for key, inner in part.items():
        held = out.get(key)
        if isinstance(inner, Mapping) and inner and isinstance(held, Mapping):
            rest = _without(held, inner)
            if rest:
                out[key] = rest
                continue
        out.pop(key, None)
    return out


def _fill_schema(template: Mapping[str, Any], value: OutputSchema) -> dict[str, Any]:
    """The template with each placeholder replaced by its field; unset fields left out."""
    out: dict[str, Any] = {}
    for key, slot in template.items():
        if isinstance(slot, Mapping):
            out[key] = _fill_schema(slot, value)
        elif isinstance(slot, str) and slot in _SCHEMA_SLOTS:
            filled = getattr(value, _SCHEMA_SLOTS[slot][0])
            if filled is not None:
                out[key] = filled
        else:
            out[key] = slot
    return out


def _capture(template: Mapping[str, Any], wire: Any, found: dict[str, Any]) -> bool:
    """Whether `wire` spells `template` (constants equal, placeholders of the right type;
    optional placeholders may be absent), filling `found` with the placeholders' values."""
    if not isinstance(wire, Mapping):
        return False
    for key, slot in template.items():
        if isinstance(slot, Mapping):
            if not _capture(slot, wire.get(key), found):
                return False
        elif isinstance(slot, str) and slot in _SCHEMA_SLOTS:
            name, kind = _SCHEMA_SLOTS[slot]
            if key in wire:
                if not isinstance(wire[key], kind):
                    return False
                found[name] = wire[key]
        elif key not in wire or wire[key] != slot:
            return False
    return True


def _counted(option: str, value: Any) -> bool:
    """Whether `value` can be the counted canonical `option` (any value, for the others)."""
    least = _LEAST.get(option)
    return least is None or (isinstance(value, int) and not isinstance(value, bool) and value >= least)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _parsed(body: Any) -> Any:
    """The body's JSON values, or None when it has none metis can carry: text that is not
    JSON, or values (parsed, or handed in as Python objects) JSON cannot carry — kept, they
    would fail every later writer of the error (a log, a stored failed exchange)."""
    if isinstance(body, bytes | str):
        try:
            body = _json.loads(body)
        except (_json.JSONDecodeError, RecursionError):
            return None
    return None if _json.unwritable(body) is not None else body


def _text(value: Any) -> str:
    """A part of a parsed body as text (`_parsed` has held it to what JSON carries)."""
    if isinstance(value, str):
        return value
    try:
        return _json.dumps(value).decode()[:_EXCERPT]
    except (ValueError, TypeError):  # a value of a type JSON has no form for
        return f"({type(value).__name__})"


def _excerpt(body: Any) -> str:
    """The start of a body `_parsed` could not read, safe to print: text with any lone
    surrogate escaped, or for Python values what JSON cannot carry in them, and where."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        return _json.printable(body[:_EXCERPT])
    found = _json.unwritable(body)
    if found is None:
        return _text(body)
    where, why = found
    at = _json.printable(field_path(where)) or "(the body itself)"
    return f"an error body metis cannot carry: {at} holds {why}"


__all__ = [
    "EFFORT_LEVELS",
    "EFFORT_SAME",
    "SCHEMA",
    "SCHEMA_DESCRIPTION",
    "SCHEMA_NAME",
    "SCHEMA_STRICT",
    "TOOL_NAME",
    "ErrorEnvelope",
    "ProviderFacts",
    "ToolChoice",
    "tool_choice_meaning",
]
