"""Provider facts as data: one row per provider or dialect, read by shared code.

What differs between providers but is not logic — the stop-reason vocabulary, the declared
shape of an error body and what it says (`provider_errors.ErrorEnvelope`), which error
types and statuses are worth a retry, how a tool choice is spelled, and which body field
each canonical option goes to — is declared here once per provider (`ProviderFacts`) and
interpreted by the base adapter. Inverse tables (wire tool choice -> canonical meaning) are
derived, never kept by hand.

The option rows are read both ways: a writer puts each canonical option where its row says,
an importer `take`s it back out of the request's option fields (`options.option_fields`),
so whatever a row does not cover stays behind as the provider-only remainder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from metis_schema.v3 import StopReason, Usage

from ..._times import READERS
from ...errors import AdapterError, ProviderError
from ...usage import CounterRule
from .contract import RequestContract
from .detect import RequestMarks
from .estimate import TokenRow
from .losses import Losses
from .options import EFFORT_LEVELS, OutputSchema, at, merge, put, take
from .provider_errors import ErrorEnvelope, ErrorFields, provider_error


@dataclass(frozen=True)
class Slot:
    """A place in a row's template where a value goes (`fill`), and where an import finds it
    again (`take_tool_choice`, `take_output_schema`).

    A slot is an object, never a string: no text a caller or a provider writes (a tool named
    like a placeholder, a schema description, a constant of a template) can be taken for
    one, nor a slot be written out as text."""

    field: str
    """The name of the value it stands for (for the output-schema slots, the `OutputSchema` field)."""
    kind: type
    """The JSON type a recorded value must have to be read back as this slot."""


TOOL_NAME = Slot("tool_name", str)
"""The tool's name inside a `ProviderFacts.tool_choice[ToolChoice.tool]` template."""
SCHEMA = Slot("schema", dict)
"""`OutputSchema.schema` inside a `ProviderFacts.output_schema` template."""
SCHEMA_NAME = Slot("name", str)
"""`OutputSchema.name` (left out of a template for a provider without one)."""
SCHEMA_STRICT = Slot("strict", bool)
"""`OutputSchema.strict` (written only when set)."""
SCHEMA_DESCRIPTION = Slot("description", str)
"""`OutputSchema.description` (written only when set)."""

_SCHEMA_SLOTS = (SCHEMA, SCHEMA_NAME, SCHEMA_STRICT, SCHEMA_DESCRIPTION)


def fill(template: Any, values: Mapping[Slot, Any]) -> Any:
    """`template` with each slot replaced by its value in `values`: the one filler of every
    template a row holds. A slot of an object whose value is None (an unset `OutputSchema`
    field) leaves its key out; constants, strings among them, are copied as they are."""
    if isinstance(template, Slot):
        return values.get(template)
    if isinstance(template, Mapping):
        out: dict[str, Any] = {}
        for key, inner in template.items():
            filled = fill(inner, values)
            if filled is not None or not isinstance(inner, Slot):
                out[key] = filled
        return out
    if isinstance(template, list):
        return [fill(inner, values) for inner in template]
    return template


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
    """Canonical meaning -> wire value; `tool` is a template holding the `TOOL_NAME` slot where the name goes.
    A meaning missing here cannot be said to this provider (the request leaves it out, logged)."""
    tool_choice_field: str = "tool_choice"
    """The request body's top-level key the tool choice goes to (and an import reads it from)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Canonical option (`max_tokens`, `temperature`, `top_p`, `stop`, `reasoning_effort`, and
    `thinking_budget` where it is one number) -> dotted body path. A canonical option handed
    to `options_to_wire` that has no path here is reported there as not sent (§7.3)."""
    option_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Canonical option -> further body paths an import reads as that option (OpenAI Chat's
    deprecated `max_tokens` beside `max_completion_tokens`). The path a request used is
    returned by `take_options` (`spelled`) and, handed back to `options_to_wire`, is where the
    value goes again, so a recorded request replays to its provider as sent. The importer
    keeps it as the `option_paths` directive (`options.OPTION_PATHS`, one rule for every
    importer: `options.imported_options`) and every writer hands it back here."""
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
    """Where `AdapterOptions.output_schema` goes: a body fragment holding the slot `SCHEMA` (and
    `SCHEMA_NAME`, `SCHEMA_STRICT`, `SCHEMA_DESCRIPTION` where the provider takes them).
    Every provider here has one; a row without it leaves the option out."""
    file_ids_from: frozenset[str] = frozenset()
    """The providers whose file ids (`MediaSource` kind `file_id`, named by its `provider`)
    this one reads: its own Files API, and any provider sharing it (OpenAI's Chat
    Completions and Responses read the same uploads). Empty: it takes no file ids. Any
    other provider's file id means nothing here and is dropped (§7.3)."""

    dialect: str = ""
    """The row's key among its provider's rows, where one wire has several (Responses:
    "openai" and "open-responses", named by the `dialect` directive); "" for a provider of
    one row."""
    request_store: bool | None = None
    """Responses: the `store` a request says unless the caller sets it (OpenAI keeps
    responses for 30 days by default; metis holds the history itself, so it asks for none:
    reasoning goes back as encrypted_content, not as a stored item id). None: left to the
    server."""
    include_encrypted_reasoning: bool = False
    """Responses: ask for `reasoning.encrypted_content`, the only way reasoning survives
    `store: false`."""

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

    # --- facts shared code reads of every registered provider: no defaults, so a row
    # without one fails as the module declaring it is imported -------------------------------
    streams_tool_calls: bool = field(kw_only=True)
    """Every model of this provider streams a tool call's arguments in pieces: what a model
    the catalog does not list is trusted with (its conservative
    `supports_streaming_tool_calls`, `catalog.Catalog.unlisted`)."""
    system_messages_in_list: bool = field(kw_only=True)
    """System messages may stand among the turns (False: one top-level system, Anthropic's
    `system`, Gemini's `systemInstruction`): an unlisted model's conservative
    `supports_system_messages_in_list`."""
    genai_prices_id: str | None = field(kw_only=True)
    """This provider's id in the `genai-prices` data set, metis's one source of prices
    (`metis._genai_prices`); None for a provider it has no prices for (Ollama runs locally)."""
    contract: RequestContract = field(kw_only=True)
    """What the provider requires and accepts beyond this adapter's request shape: its strict
    request contract (`contract.strict_shape`, `metis validate --provider`)."""

    # --- what a Chat Completions dialect extends the wire with (read by `chat/`; a row of
    # another wire leaves them at their defaults) -------------------------------------------
    reasoning_details: bool = False
    """Replies carry `reasoning_details` items that must go back unchanged (OpenRouter)."""
    plain_reasoning_keys: tuple[str, ...] = ()
    """Message/delta keys holding plain reasoning text, first present wins."""
    cache_control: bool = False
    """Anthropic-style `cache_control` markers inside content parts are understood."""
    stream_usage_option: bool = False
    """Streams report usage only when asked with `stream_options.include_usage` (OpenAI)."""
    thinking_parts: bool = False
    """Reasoning comes as `{"type": "thinking", "thinking": [{"type": "text", ...}]}` content
    parts of the assistant message and of stream deltas (Mistral's Magistral models), and goes
    back the same way, to the same model only."""
    replays_plain_reasoning: bool = False
    """Plain reasoning text read under one of `plain_reasoning_keys` goes back on the
    assistant message under the key it came in (kept in provider_raw as `reasoning_key`),
    to this provider only. The key is the one the reply used rather than a fixed one because
    one row serves several servers (vLLM and DeepSeek send `reasoning_content`, Ollama `/v1`
    `reasoning`), each reading back its own."""
    tool_result_images: bool = False
    """Tool messages take `image_url` parts beside text; else images in tool results are
    dropped with the §7.3 WARN."""
    file_media_types: frozenset[str] = frozenset()
    """Document media types a USER message carries as `{"type": "file", "file": {"filename",
    "file_data": <data URL>}}` parts (or `file_id` for this provider's own uploaded files);
    other documents are dropped with the WARN."""
    file_urls: bool = False
    """A document at an http(s) URL goes as `file_data: <url>` (else it is dropped: the
    server wants the bytes)."""
    video_parts: bool = False
    """Videos go in USER messages as `{"type": "video_url", "video_url": {"url"}}` parts, a
    URL or a base64 data URL; else they are dropped with the WARN."""
    audio_formats: Mapping[str, str] = field(default_factory=dict)
    """Audio media type -> `input_audio.format` for base64 audio in USER messages; other
    audio is dropped with the WARN (no server here takes audio by URL)."""
    prefix_marker: bool = False
    """A conversation ending with an ASSISTANT message (a prefill: the reply continues it)
    marks that message `prefix: true` (Mistral refuses the conversation otherwise: "Expected
    last role User or Tool (or Assistant with prefix True)"). The marker is the wire's
    spelling of a canonical meaning (the trailing assistant message), so an import takes it
    from the last message and the writer puts it back."""

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
        return fill(self.tool_choice[mode], {TOOL_NAME: name or ""})

    def tools_to_wire(self, body: dict[str, Any], wire_tools: Any, tool_choice: str | None) -> None:
        """The offered tools (already written in this provider's spelling, a list or Gemini's
        recorded single object; empty: no `tools` key) and then the tool choice at
        `tool_choice_field`: the one order every writer sends them in."""
        if wire_tools:
            body["tools"] = wire_tools
        choice = self.tool_choice_to_wire(tool_choice)
        if choice is not None:
            body[self.tool_choice_field] = choice

    def take_tool_choice(self, fields: dict[str, Any]) -> str | None:
        """The canonical tool choice recorded at `tool_choice_field` of an import's option
        fields (the `tool_choice` table read backwards), taken out of them. Keys beside the meaning
        (Anthropic's `disable_parallel_tool_use`, Gemini's further `allowedFunctionNames`)
        stay behind, provider-only; a value that is not one of this row's spellings (a tool
        named "auto", Mistral's alias "required") stays whole."""
        path = self.tool_choice_field
        wire = at(fields, path)
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
        both = self.effort_or_budget and budget_at is not None and at(fields, budget_at) is not None
        for option, declared in self.options.items():
            if option == "reasoning_effort" and both:
                continue
            for path in (declared, *self.option_aliases.get(option, ())):
                value = at(fields, path)
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
        Losses(self.provider, session_id).request("option", reason, at=f"option {option}")

    def output_schema_to_wire(self, value: OutputSchema | None, body: dict[str, Any]) -> None:
        """Write a structured-output schema where this provider takes it."""
        if value is not None and self.output_schema:
            values = {slot: getattr(value, slot.field) for slot in _SCHEMA_SLOTS}
            merge(body, fill(self.output_schema, values))

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
        """A provider error body (bytes, text or parsed) -> ProviderError with its own type
        and message, read through the row's declared error shape; never raises
        (`provider_errors.provider_error`)."""
        return provider_error(self, body, status_code)


def _match(template: Any, wire: Any) -> str | None:
    """The name `wire` puts where `template` has the TOOL_NAME slot, if the rest is the same."""
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


def _capture(template: Mapping[str, Any], wire: Any, found: dict[str, Any]) -> bool:
    """Whether `wire` spells `template` (constants equal, placeholders of the right type;
    optional placeholders may be absent), filling `found` with the placeholders' values."""
    if not isinstance(wire, Mapping):
        return False
    for key, slot in template.items():
        if isinstance(slot, Mapping):
            if not _capture(slot, wire.get(key), found):
                return False
        elif isinstance(slot, Slot):
            if key in wire:
                if not isinstance(wire[key], slot.kind):
                    return False
                found[slot.field] = wire[key]
        elif key not in wire or wire[key] != slot:
            return False
    return True


def _counted(option: str, value: Any) -> bool:
    """Whether `value` can be the counted canonical `option` (any value, for the others)."""
    least = _LEAST.get(option)
    return least is None or (isinstance(value, int) and not isinstance(value, bool) and value >= least)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


__all__ = [
    "EFFORT_LEVELS",
    "EFFORT_SAME",
    "SCHEMA",
    "SCHEMA_DESCRIPTION",
    "SCHEMA_NAME",
    "SCHEMA_STRICT",
    "TOOL_NAME",
    "ErrorEnvelope",
    "ErrorFields",
    "ProviderFacts",
    "Slot",
    "ToolChoice",
    "fill",
    "tool_choice_meaning",
]
