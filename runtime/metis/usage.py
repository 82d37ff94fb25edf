"""What canonical token counts mean, pinned in one place (spec §4.3 Usage, §6.4).

Canonical `input_tokens` counts only *uncached* input. Cache reads go to
`cached_input_tokens` and cache writes to `cache_creation_input_tokens`; the total prompt
is their sum (`prompt_tokens`), and each token is priced exactly once. Beyond those four,
`Usage.units` keeps the counts prices are set in (reasoning tokens, one-hour cache writes,
audio and image tokens, server-tool requests by kind), each a part of a total above or a
count of its own, never added to the totals; and `Usage.billed_cost_usd` keeps what the
provider said it billed.

Providers count differently, so each has one rule, a data row of `RULES` read by
`normalize_usage` (nothing else interprets provider usage fields). A row names where each
count is, whether the prompt count already includes the cache counts, and where its
rule is documented. The rows, in words:

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
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

from metis_schema.v3 import Usage, UsageUnits, UsageUpdateEvent

from .errors import MetisError, WireFormatError


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


_STEP = re.compile(r"^(?P<key>\w+)(?:\[(?P<field>\w+)=(?P<value>\w+)\])?$")


@dataclass(frozen=True, slots=True)
class Counter:
    """Where one count is in a usage object: terms summed, each the first path present.

    Written as text: `a.b|c_d` is `a.b`, else `c_d`; `x + y` sums two terms;
    `details[modality=AUDIO].tokenCount` is the tokenCount of the details item whose
    modality is AUDIO.
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

    def read(self, usage: Mapping[str, Any], provider: str) -> int:
        total = 0
        for paths in self.terms:
            for path in paths:
                found, value = _walk(usage, path)
                if found:
                    total += _count(value, ".".join(s[0] for s in path), provider)
                    break
        return total


def _walk(node: Any, path: tuple[tuple[str, str | None, str | None], ...]) -> tuple[bool, Any]:
    for key, match_field, match_value in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
        if match_field is not None:
            if not isinstance(node, list):
                return False, None
            node = next(
                (i for i in node if isinstance(i, Mapping) and i.get(match_field) == match_value),
                None,
            )
            if node is None:
                return False, None
    return node is not None, node


def _count(value: Any, where: str, provider: str) -> int:
    if type(value) is int and value >= 0:
        return value  # the common case, without the checks below
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise WireFormatError(
            f"usage field {where} is not an integer: {value!r}", provider=provider, path=f"usage.{where}"
        )
    try:
        number = int(value)
    except ValueError:
        raise WireFormatError(
            f"usage field {where} is not an integer: {value!r}", provider=provider, path=f"usage.{where}"
        ) from None
    if number < 0:
        raise WireFormatError(
            f"usage field {where} is negative: {number}", provider=provider, path=f"usage.{where}"
        )
    return number


@dataclass(frozen=True, slots=True)
class CounterRule:
    """One provider's usage counters -> TokenCounts (see the module docstring).

    `prompt_includes_cache`: the prompt count already holds the cache reads and writes
    (OpenAI, Gemini), so they are taken out of it; False: they are counted apart from it
    (Anthropic). `extra_input`/`extra_output` are counts the provider keeps apart that
    are billed as input/output (Gemini's tool-use prompt and thoughts). `units` maps
    UsageUnits fields to their counters; `billed_cost` is where the provider says what it
    charged; `from_content` counts server-tool calls from the reply's own blocks where the
    usage object has no counter for them. `source` is where the rule is documented.
    """

    source: str
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


def _c(spec: str) -> Counter:
    return Counter(spec)


_CHAT_UNITS = {
    "reasoning_tokens": _c("completion_tokens_details.reasoning_tokens"),
    "input_audio_tokens": _c("prompt_tokens_details.audio_tokens"),
    "input_image_tokens": _c("prompt_tokens_details.image_tokens"),
    "output_audio_tokens": _c("completion_tokens_details.audio_tokens"),
    "output_image_tokens": _c("completion_tokens_details.image_tokens"),
}
_CHAT = CounterRule(
    source="OpenAI SDK types/completion_usage.py (cached_tokens and cache_write_tokens are part of "
    "prompt_tokens; reasoning_tokens part of completion_tokens); provider-wire-formats.md §2",
    prompt=_c("prompt_tokens"),
    output=_c("completion_tokens"),
    cached=_c("prompt_tokens_details.cached_tokens"),
    written=_c("prompt_tokens_details.cache_write_tokens"),
    units=_CHAT_UNITS,
)


def _gemini(camel: str, snake: str) -> str:
    return f"{camel}|{snake}"


def _modality(camel: str, snake: str, *modalities: str) -> Counter:
    return _c(
        " + ".join(f"{camel}[modality={m}].tokenCount|{snake}[modality={m}].token_count" for m in modalities)
    )


RULES: dict[str, CounterRule] = {
    "anthropic": CounterRule(
        source="Anthropic SDK types/usage.py and the prompt-caching docs: total input = input_tokens + "
        "cache_creation_input_tokens + cache_read_input_tokens; provider-wire-formats.md §1",
        prompt=_c("input_tokens"),
        output=_c("output_tokens"),
        cached=_c("cache_read_input_tokens"),
        written=_c("cache_creation_input_tokens"),
        prompt_includes_cache=False,
        units={
            "reasoning_tokens": _c("output_tokens_details.thinking_tokens"),
            "cache_creation_1h_input_tokens": _c("cache_creation.ephemeral_1h_input_tokens"),
            "web_search_requests": _c("server_tool_use.web_search_requests"),
            "web_fetch_requests": _c("server_tool_use.web_fetch_requests"),
        },
    ),
    "openai": _CHAT,
    "mistral": CounterRule(
        source="Mistral chat completion usage (OpenAI's shape: cached_tokens inside prompt_tokens); "
        "provider-wire-formats.md §5",
        prompt=_c("prompt_tokens"),
        output=_c("completion_tokens"),
        cached=_c("prompt_tokens_details.cached_tokens"),
        units={"reasoning_tokens": _c("completion_tokens_details.reasoning_tokens")},
    ),
    "openrouter": CounterRule(
        source="https://openrouter.ai/docs/use-cases/usage-accounting (cached_tokens read from and "
        "cache_write_tokens written to the cache, both within prompt_tokens; cost is the charge); "
        "provider-wire-formats.md §4",
        prompt=_c("prompt_tokens"),
        output=_c("completion_tokens"),
        cached=_c("prompt_tokens_details.cached_tokens"),
        written=_c("prompt_tokens_details.cache_write_tokens"),
        units={**_CHAT_UNITS, "web_search_requests": _c("server_tool_use.web_search_requests")},
        billed_cost=("cost",),
    ),
    "responses": CounterRule(
        source="OpenAI SDK types/responses/response_usage.py (cached_tokens part of input_tokens, "
        "reasoning_tokens part of output_tokens); provider-wire-formats.md §2",
        prompt=_c("input_tokens"),
        output=_c("output_tokens"),
        cached=_c("input_tokens_details.cached_tokens"),
        written=_c("input_tokens_details.cache_write_tokens"),
        units={"reasoning_tokens": _c("output_tokens_details.reasoning_tokens")},
        # usage counts no built-in tool call; each is an output item of the reply
        # (https://platform.openai.com/docs/pricing: web search per 1,000 calls, code
        # interpreter per container)
        from_content={"web_search": "web_search_requests", "code_interpreter": "code_execution_requests"},
    ),
    "gemini": CounterRule(
        source="google-genai GenerateContentResponseUsageMetadata (cachedContentTokenCount is part of "
        "promptTokenCount; thoughtsTokenCount is not part of candidatesTokenCount); "
        "provider-wire-formats.md §3",
        prompt=_c(_gemini("promptTokenCount", "prompt_token_count")),
        output=_c(_gemini("candidatesTokenCount", "candidates_token_count")),
        cached=_c(_gemini("cachedContentTokenCount", "cached_content_token_count")),
        extra_input=_c(_gemini("toolUsePromptTokenCount", "tool_use_prompt_token_count")),
        extra_output=_c(_gemini("thoughtsTokenCount", "thoughts_token_count")),
        units={
            "reasoning_tokens": _c(_gemini("thoughtsTokenCount", "thoughts_token_count")),
            "input_audio_tokens": _modality("promptTokensDetails", "prompt_tokens_details", "AUDIO"),
            "input_image_tokens": _modality(
                "promptTokensDetails", "prompt_tokens_details", "IMAGE", "DOCUMENT"
            ),
            "output_audio_tokens": _modality("candidatesTokensDetails", "candidates_tokens_details", "AUDIO"),
            "output_image_tokens": _modality("candidatesTokensDetails", "candidates_tokens_details", "IMAGE"),
        },
    ),
    "ollama": CounterRule(
        source="Ollama API docs /api/chat (prompt_eval_count, eval_count); provider-wire-formats.md §4",
        prompt=_c("prompt_eval_count"),
        output=_c("eval_count"),
        prompt_includes_cache=False,
    ),
}
"""Provider -> its counter rule: the one place provider usage fields are interpreted."""


def normalize_usage(provider: str, usage: Mapping[str, Any] | None) -> TokenCounts:
    """Provider usage object -> canonical TokenCounts, by the provider's row of `RULES`."""
    if not usage:
        return TokenCounts()
    rule = RULES.get(provider)
    if rule is None:
        raise WireFormatError(f"no usage normalization rule for provider {provider!r}", provider=provider)
    prompt = rule.prompt.read(usage, provider)
    cached = rule.cached.read(usage, provider) if rule.cached else 0
    written = rule.written.read(usage, provider) if rule.written else 0
    if rule.prompt_includes_cache:
        cached = min(cached, prompt)  # a read is at most the prompt
        written = min(written, prompt - cached)  # a write at most what the reads left
        prompt -= cached + written
    if rule.extra_input:
        prompt += rule.extra_input.read(usage, provider)
    output = rule.output.read(usage, provider)
    if rule.extra_output:
        output += rule.extra_output.read(usage, provider)
    units = dict.fromkeys(UNIT_FIELDS, 0)
    for name, counter in rule.units.items():
        units[name] = counter.read(usage, provider)
    units["cache_creation_1h_input_tokens"] = min(units["cache_creation_1h_input_tokens"], written)
    billed = _billed(usage, rule.billed_cost, provider) if rule.billed_cost else None
    return TokenCounts._make((prompt, output, cached, written, *units.values(), billed))


def content_units(provider: str, counts: TokenCounts, content: Iterable[Any]) -> TokenCounts:
    """`counts` with the server-tool calls the reply's blocks show and its usage did not
    count (the provider's `from_content` row); `counts` itself when there are none."""
    rule = RULES.get(provider)
    if rule is None or not rule.from_content:
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


def _billed(usage: Mapping[str, Any], path: tuple[str, ...], provider: str) -> Decimal | None:
    node: Any = usage
    for key in path:
        if not isinstance(node, Mapping) or node.get(key) is None:
            return None
        node = node[key]
    where = "usage." + ".".join(path)
    if isinstance(node, bool) or not isinstance(node, int | float | str):
        raise WireFormatError(f"{where} is not a number: {node!r}", provider=provider, path=where)
    try:
        value = Decimal(str(node))
    except InvalidOperation:
        raise WireFormatError(f"{where} is not a number: {node!r}", provider=provider, path=where) from None
    if not value.is_finite() or value < 0:
        raise WireFormatError(
            f"{where} is not a non-negative amount: {node!r}", provider=provider, path=where
        )
    return Decimal(format(value, "f"))


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
    "RULES",
    "UNIT_FIELDS",
    "CounterRule",
    "TokenCounts",
    "UsageCountError",
    "content_units",
    "counts_of",
    "merge_event",
    "normalize_usage",
    "prompt_tokens",
    "units_of",
    "usage_event",
]
