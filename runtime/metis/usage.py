"""What canonical token counts mean, pinned in one place (spec §4.3 Usage, §6.4).

Canonical `input_tokens` counts only *uncached* input. Cache reads go to
`cached_input_tokens` and cache writes to `cache_creation_input_tokens`; the total prompt
is their sum (`prompt_tokens`), and each token is priced exactly once. Beyond those four,
`Usage.units` keeps the counts prices are set in (reasoning tokens, one-hour cache writes,
audio and image tokens, server-tool requests by kind), each a part of a total above or a
count of its own, never added to the totals; and `Usage.billed_cost_usd` keeps what the
provider said it billed.

Providers count differently, so each has one rule, a `CounterRule` on its facts row
(`ProviderFacts.usage`, in the provider's `facts.py`; a Chat dialect's in its own module
under `adapters/chat/`), read by `normalize_usage` (nothing else interprets provider usage
fields). A rule names the declared wire shape its usage object is read through (which
checks every count), where each count is, whether the prompt count already includes the
cache counts, and where the rule is documented. A new provider or dialect brings its rule
on its row; nothing here changes. The rules, in words:

- Anthropic `input_tokens` already *excludes* `cache_read_input_tokens` and
  `cache_creation_input_tokens`: taken as they are. `cache_creation.ephemeral_1h_input_tokens`
  is the one-hour part of the cache writes; `server_tool_use.{web_search,web_fetch}_requests`
  count server-tool calls; `output_tokens_details.thinking_tokens` is reasoning (in output).
- OpenAI Chat, OpenRouter and Mistral `prompt_tokens` *include*
  `prompt_tokens_details.cached_tokens` and `cache_write_tokens`: both are subtracted.
  `completion_tokens` includes `completion_tokens_details.reasoning_tokens`. OpenRouter's
  `usage.cost` is what it billed.
- The Responses API `input_tokens` *includes* `input_tokens_details.cached_tokens` (and
  `cache_write_tokens`): both are subtracted; `output_tokens` includes
  `output_tokens_details.reasoning_tokens`.
- Gemini `promptTokenCount` *includes* `cachedContentTokenCount`: subtracted;
  `toolUsePromptTokenCount` is input too; `thoughtsTokenCount` is billed as output and is
  not part of `candidatesTokenCount`, so it is added to output (and is the reasoning).
- Ollama reports `prompt_eval_count` (omitted when fully cached: 0) and `eval_count`.

No overlap is counted twice: where a prompt includes its cache counts, those can never
add up to more than the prompt. A cache read is taken first (at most the prompt), then a
cache write (at most what is left), and the uncached input is what remains; a reply whose
counters overlap (an OpenRouter reply reporting the same tokens as both read and written)
is priced on the prompt it reports, not on the sum of its counters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from types import ModuleType
from typing import Annotated, Any, NamedTuple

from metis_schema.v3 import Usage, UsageUnits, UsageUpdateEvent
from pydantic import BeforeValidator, Field

from .errors import MetisError, UnknownAdapterError, WireFormatError


class UsageCountError(MetisError, ValueError):
    """A token count that is not a non-negative integer."""


UNIT_FIELDS = tuple(UsageUnits.model_fields)
"""The counts of `Usage.units`, in schema order (also the tail of `TokenCounts`)."""


class TokenCounts(NamedTuple):
    """Normalized counts of one response (see module docstring for their meaning).

    Immutable; a NamedTuple because every response makes one (a frozen dataclass costs
    several times as much to build). The first four are Usage's token totals, the next
    nine `Usage.units`, the last the provider's billed cost. `pricing.make_usage` checks
    that each count is a non-negative int before any Usage is built from them.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    input_audio_tokens: int = 0
    input_image_tokens: int = 0
    output_audio_tokens: int = 0
    output_image_tokens: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0
    code_execution_requests: int = 0
    billed_cost_usd: Decimal | None = None


assert TokenCounts._fields[4:13] == UNIT_FIELDS, "TokenCounts and UsageUnits must list the same units"


def prompt_tokens(usage: Usage | TokenCounts) -> int:
    """The whole prompt: uncached input + cache reads + cache writes.

    The one input count every command shows (`show`, `price`, `sessions`, the
    OpenTelemetry export's `gen_ai.usage.input_tokens`), so they always agree.
    """
    return usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_input_tokens


def counts_of(usage: Usage) -> TokenCounts:
    """The TokenCounts a stored Usage was made from (to price it again)."""
    units = usage.units
    return TokenCounts._make(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens,
            usage.cache_creation_input_tokens,
            *(getattr(units, name) if units is not None else 0 for name in UNIT_FIELDS),
            usage.billed_cost_usd,
        )
    )


def units_of(counts: TokenCounts) -> UsageUnits | None:
    """`Usage.units` of `counts`; None when every unit is 0 (the common reply)."""
    values = counts[4:13]
    if not any(values):
        return None
    return UsageUnits(**dict(zip(UNIT_FIELDS, values, strict=True)))


# --- where each provider keeps each count: the rules as data --------------------------------------------


def _numeric_text(value: Any) -> Any:
    """A count sent as text ("12", as some compatible servers do): its integer; anything
    else as it is, for the strict check to judge."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


Count = Annotated[int, Field(strict=True, ge=0)]
"""A token count as a wire states it: a JSON integer, not negative; not a boolean, a
fraction or text. The one declaration of a count, which every declared wire shape uses
(Anthropic's, Gemini's and Ollama's as they are, and `TextCount` where a server may write
one as text)."""

TextCount = Annotated[Count, BeforeValidator(_numeric_text)]
"""A `Count` also written as text ("12", as some Chat Completions and Responses compatible
servers do): that integer; any other text is refused as a `Count` is."""

Amount = Annotated[Decimal, Field(strict=False, ge=0, allow_inf_nan=False)]
"""An amount of money a usage object states (OpenRouter's `cost`): a finite, non-negative
number (or its text)."""


_STEP = re.compile(r"^(?P<key>\w+)(?:\[(?P<field>\w+)=(?P<value>\w+)\])?$")


@dataclass(frozen=True, slots=True)
class Counter:
    """Where one count is in a usage object read through its shape: terms summed, each the
    first path present.

    Written as text: `a.b|c_d` is `a.b`, else `c_d`; `x + y` sums two terms;
    `details[modality=AUDIO].tokenCount` is the tokenCount of the details item whose
    modality is AUDIO. Every key a path names is a key of the rule's declared shape.
    """

    spec: str
    terms: tuple[tuple[tuple[tuple[str, str | None, str | None], ...], ...], ...] = field(init=False)

    def __post_init__(self) -> None:
        terms = []
        for term in self.spec.split("+"):
            paths = []
            for path in term.strip().split("|"):
                steps = []
                for step in path.split("."):
                    m = _STEP.match(step)
                    if m is None:
                        raise ValueError(f"bad usage path step {step!r} in {self.spec!r}")
                    steps.append((m["key"], m["field"], m["value"]))
                paths.append(tuple(steps))
            terms.append(tuple(paths))
        object.__setattr__(self, "terms", tuple(terms))

    def read(self, usage: Mapping[str, Any]) -> int:
        """The count in `usage`, a usage object its rule's shape has checked (0 where absent)."""
        total = 0
        for paths in self.terms:
            for path in paths:
                value = _walk(usage, path)
                if value is not None:
                    total += value
                    break
        return total


def _walk(node: Any, path: tuple[tuple[str, str | None, str | None], ...]) -> Any:
    """The value at `path` in `node`; None when a step is absent (or null). Every usage object
    a reply gives is read here, most of them plain dicts: those skip the Mapping check."""
    for key, match_field, match_value in path:
        if type(node) is not dict and not isinstance(node, Mapping):
            return None
        node = node.get(key)
        if node is None:
            return None
        if match_field is not None:
            node = next(
                (i for i in node if isinstance(i, Mapping) and i.get(match_field) == match_value),
                None,
            )
            if node is None:
                return None
    return node


@dataclass(frozen=True, slots=True)
class CounterRule:
    """One provider's usage counters -> TokenCounts (see the module docstring).

    `shape`: the provider's declared usage object (a TypedDict of its `wire.py`), through
    which the usage object is read (`adapters._kit.reader.read`): it checks every count
    (a `Count`) and the billed amount, so a malformed one is a WireFormatError at its
    path. `prompt_includes_cache`: the prompt count already holds the cache reads and writes
    (OpenAI, Gemini), so they are taken out of it; False: they are counted apart from it
    (Anthropic). `extra_input`/`extra_output` are counts the provider keeps apart that
    are billed as input/output (Gemini's tool-use prompt and thoughts). `units` maps
    UsageUnits fields to their counters; `billed_cost` is where the provider says what it
    charged; `from_content` counts server-tool calls from the reply's own blocks where the
    usage object has no counter for them. `source` is where the rule is documented.
    """

    source: str
    shape: Any
    prompt: Counter
    output: Counter
    cached: Counter | None = None
    written: Counter | None = None
    prompt_includes_cache: bool = True
    extra_input: Counter | None = None
    extra_output: Counter | None = None
    units: Mapping[str, Counter] = field(default_factory=dict)
    billed_cost: tuple[str, ...] = ()
    from_content: Mapping[str, str] = field(default_factory=dict)
    """Server tools the usage object does not count: their `server_tool_use` block name ->
    the UsageUnits field each such block of the reply adds one to (`content_units`)."""

    def counters(self) -> list[Counter]:
        """Every counter of the rule (to check each against the declared shape)."""
        found = [self.prompt, self.output, self.cached, self.written, self.extra_input, self.extra_output]
        return [c for c in (*found, *self.units.values()) if c is not None]

    def stated(self, usage: Mapping[str, Any]) -> set[str]:
        """Which of the four token totals (`input_tokens`, `output_tokens`,
        `cached_input_tokens`, `cache_creation_input_tokens`) a usage object states at all: a
        stream's partial usage (Anthropic's `message_delta`) leaves the others as they were."""
        totals = {
            "input_tokens": self.prompt,
            "output_tokens": self.output,
            "cached_input_tokens": self.cached,
            "cache_creation_input_tokens": self.written,
        }
        return {
            name
            for name, counter in totals.items()
            if counter is not None
            and any(_walk(usage, path) is not None for paths in counter.terms for path in paths)
        }

    def reported_prompt(self, counts: Usage | TokenCounts | None) -> int:
        """The prompt count this provider's usage object states for canonical `counts`: the
        whole prompt where it includes the cache counts (`prompt_tokens`), else only the
        uncached input. What a reply written in this provider's format says."""
        if counts is None:
            return 0
        return prompt_tokens(counts) if self.prompt_includes_cache else counts.input_tokens


@cache
def _adapters() -> ModuleType:
    """`metis.adapters`, imported on first use (it imports this module): the import statement
    inside `rule_for`, which every reply calls twice, took a reply 2 µs each time."""
    from . import adapters

    return adapters


def rule_for(provider: str) -> CounterRule:
    """The counter rule on `provider`'s facts row (`ProviderFacts.usage`)."""
    rule: CounterRule | None
    try:
        rule = _adapters().get(provider).facts.usage
    except UnknownAdapterError:
        rule = None
    if rule is None:
        raise WireFormatError(f"no usage normalization rule for provider {provider!r}", provider=provider)
    return rule


def normalize_usage(provider: str, usage: Mapping[str, Any] | None, *, read_as: Any = None) -> TokenCounts:
    """Provider usage object -> canonical TokenCounts, by the rule on the provider's facts row.

    The usage object is read through the rule's declared shape (`reader.read`: JSON-safe,
    every count checked) unless the caller's own read did part of that: `read_as` is the
    declared type `usage` came out of the caller's `reader.read` (or `read_json`) as, part
    of the reply it read. When that is the rule's shape (Anthropic's `Response` and stream
    events, Gemini's `GenerateContentResponse` declare their usage so), the value is counted
    as it is: reading it again found what the first read did (a second walk and check, 2.7
    µs of an Anthropic reply's 130). Any other `read_as` (a Chat or Responses reply declares
    `usage` as a plain object, its dialects' shapes differ; Ollama's counts are fields of
    the reply) was taken in JSON-safe with the reply, so only the shape is checked here (a
    second walk of it was 1.6 µs of an OpenAI Chat reply). tests/core/test_costs.py holds
    every caller that passes one to what its reply shape declares.
    """
    if not usage:
        return TokenCounts()
    rule = rule_for(provider)
    if read_as is None:
        from .adapters._kit.reader import read

        usage = read(rule.shape, usage, provider=provider, path="usage", what="usage")
    elif read_as is not rule.shape:
        from .adapters._kit.reader import checked

        usage = checked(rule.shape, usage, provider=provider, path="usage", what="usage")
    prompt = rule.prompt.read(usage)
    cached = rule.cached.read(usage) if rule.cached else 0
    written = rule.written.read(usage) if rule.written else 0
    if rule.prompt_includes_cache:
        cached = min(cached, prompt)  # a read is at most the prompt
        written = min(written, prompt - cached)  # a write at most what the reads left
        prompt -= cached + written
    if rule.extra_input:
        prompt += rule.extra_input.read(usage)
    output = rule.output.read(usage)
    if rule.extra_output:
        output += rule.extra_output.read(usage)
    units = dict.fromkeys(UNIT_FIELDS, 0)
    for name, counter in rule.units.items():
        units[name] = counter.read(usage)
    units["cache_creation_1h_input_tokens"] = min(units["cache_creation_1h_input_tokens"], written)
    billed = _billed(usage, rule.billed_cost) if rule.billed_cost else None
    return TokenCounts._make((prompt, output, cached, written, *units.values(), billed))


def content_units(provider: str, counts: TokenCounts, content: Iterable[Any]) -> TokenCounts:
    """`counts` with the server-tool calls the reply's blocks show and its usage did not
    count (the provider's `from_content` row); `counts` itself when there are none."""
    try:
        rule = rule_for(provider)
    except WireFormatError:
        return counts
    if not rule.from_content:
        return counts
    found: dict[str, int] = {}
    for block in content:
        if getattr(block, "type", None) == "server_tool_use":
            unit = rule.from_content.get(block.name)
            if unit is not None:
                found[unit] = found.get(unit, 0) + 1
    if not found:
        return counts
    return counts._replace(**{unit: max(getattr(counts, unit), n) for unit, n in found.items()})


def _billed(usage: Mapping[str, Any], path: tuple[str, ...]) -> Decimal | None:
    """The billed amount at `path` (an `Amount` of the shape), written without an exponent."""
    node: Any = usage
    for key in path:
        if not isinstance(node, Mapping) or node.get(key) is None:
            return None
        node = node[key]
    return Decimal(format(node, "f"))


def usage_event(counts: TokenCounts) -> UsageUpdateEvent:
    """The stream event carrying the normalized counts (each replaces what came before)."""
    return UsageUpdateEvent(
        type="usage_update",
        input_tokens=counts.input_tokens,
        output_tokens=counts.output_tokens,
        cached_input_tokens=counts.cached_input_tokens,
        cache_creation_input_tokens=counts.cache_creation_input_tokens,
        units=units_of(counts),
        billed_cost_usd=counts.billed_cost_usd,
    )


def merge_event(old: TokenCounts | None, event: UsageUpdateEvent) -> TokenCounts:
    """The counts after a usage_update: each count it reports replaces the one before."""
    old = old or TokenCounts()
    units = event.units
    return TokenCounts._make(
        (
            old.input_tokens if event.input_tokens is None else event.input_tokens,
            old.output_tokens if event.output_tokens is None else event.output_tokens,
            old.cached_input_tokens if event.cached_input_tokens is None else event.cached_input_tokens,
            old.cache_creation_input_tokens
            if event.cache_creation_input_tokens is None
            else event.cache_creation_input_tokens,
            *(old[4:13] if units is None else (getattr(units, name) for name in UNIT_FIELDS)),
            old.billed_cost_usd if event.billed_cost_usd is None else event.billed_cost_usd,
        )
    )


__all__ = [
    "UNIT_FIELDS",
    "Amount",
    "Count",
    "Counter",
    "CounterRule",
    "TextCount",
    "TokenCounts",
    "UsageCountError",
    "content_units",
    "counts_of",
    "merge_event",
    "normalize_usage",
    "prompt_tokens",
    "rule_for",
    "units_of",
    "usage_event",
]
