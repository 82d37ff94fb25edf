"""The one pre-flight token estimate (`Adapter.estimate_input_tokens`), fed by a row of numbers.

No provider ships its tokenizer to metis, so the estimate is characters divided by a
measured characters-per-token, plus fixed overheads for what the provider's prompt
template adds (role markers, tool framing, images priced per picture). What differs between
providers is numbers and a few choices, not logic: each provider's `TokenRow` (a field of
its facts row, `ProviderFacts.tokens`) says them, with the error measured against the
provider's own usage counts beside it, and `estimate` walks the canonical messages and
tools once for every provider.

What counts, for every provider: the text of text blocks, the name and JSON arguments of
tool calls, the blocks inside tool results, images by the row's price each, and each tool
definition as the row's `tool_text` spells it. Thinking counts where the row says the
request carries it (`Thinking`); the further block kinds a provider's request carries
(Anthropic's redacted thinking, server-tool calls and results, search results, compaction
summaries) are named by the row's `also`. Documents, audio and video are not counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from metis_schema.v3 import (
    CompactionBlock,
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    SearchResultBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ... import _json


class JsonLength(StrEnum):
    """How the length of a JSON value (call arguments, a tool definition) is measured: as
    the text the provider's wire, or its SDK, spells it."""

    compact = "compact"
    """Characters of metis's own compact JSON (`_json.dumps`), what metis sends."""
    compact_bytes = "compact_bytes"
    """UTF-8 bytes of the same compact JSON."""
    spaced = "spaced"
    """Characters of `json.dumps` with its default `, ` and `: ` separators, non-ASCII kept."""

    def length(self, value: Any, what: str | None = None) -> int:
        """The length of `value` written this way. Given `what`, a value holding what JSON
        cannot carry (a caller's call input: an integer past 4,300 digits) is refused as it
        is met, NotJsonError naming `what` and the place: metis's writer refuses it as it
        writes, at no cost for a clean value; for the standard library's, which would write
        a NaN or fail untyped, it is looked for first."""
        if self is JsonLength.spaced:
            if what is not None:
                _json.refuse_unwritable(value, what)
            return len(json.dumps(value, ensure_ascii=False))
        text = _json.dumps(value, what=what or "")
        return len(text) if self is JsonLength.compact_bytes else len(text.decode())


class Thinking(StrEnum):
    """Which thinking blocks a request carries back, so counts."""

    every = "every"
    """Every thinking block's text (the request sends them, or the provider counts them)."""
    own = "own"
    """Only this provider's own replies' (a Chat dialect replays reasoning to the provider
    that wrote it, and no other: an upper guess, since the model is not known here)."""
    none = "none"
    """None."""


class Rounding(StrEnum):
    """How characters / chars_per_token becomes whole tokens."""

    up = "up"
    """`math.ceil`."""
    nearest = "nearest"
    """Python's `round` (halves to even)."""


Also = frozenset[str]
"""Block types beyond text, thinking, tool calls, tool results and images that a provider's
request carries, each counted as `_chars` says."""

ANTHROPIC_BLOCKS: Also = frozenset(
    {"redacted_thinking", "server_tool_use", "server_tool_result", "search_result", "compaction"}
)
"""The further blocks an Anthropic request carries (`also` of its row)."""


def _no_tools(tool: ToolDefinition) -> tuple[Any, ...]:
    return ()


@dataclass(frozen=True)
class TokenRow:
    """One provider's numbers for `estimate` (see the module docstring).

    Tokens = `request` + per message `message` + per image `image` + per tool call
    `tool_call` + per tool result `tool_result` + (with any tools) `tools_preamble` + per
    tool `tool` + the counted characters / `chars_per_token`, rounded by `rounding`: once
    for the whole request, or (`each_apart`) for each message and each tool definition.
    """

    chars_per_token: float
    image: int
    """Tokens of one image (sizes are unknown here: each row says which price it takes)."""
    measured: str
    """The error measured against the provider's own usage counts, and the test that holds it."""
    message: int = 0
    request: int = 0
    tool_call: int = 0
    tool_result: int = 0
    tool: int = 0
    tools_preamble: int = 0
    """Added once when the request has any tool (a tool-use system preamble)."""
    rounding: Rounding = Rounding.up
    each_apart: bool = False
    """Each message and each tool definition rounded on its own (a prompt rendered message
    by message through a chat template: Ollama), else the request's characters at once."""
    role_names: bool = False
    """The role's name is prompt text of its message (a rendered chat template)."""
    thinking: Thinking = Thinking.every
    arguments: JsonLength = JsonLength.compact
    """How a tool call's (and a server-tool call's) arguments are measured."""
    tool_json: JsonLength = JsonLength.compact
    """How the JSON values of `tool_text` are measured."""
    tool_text: Callable[[ToolDefinition], tuple[Any, ...]] = _no_tools
    """A tool definition as the request spells it: pieces, each a string (its length) or a
    JSON value (measured by `tool_json`); the provider's own writer, so the count follows it."""
    also: Also = frozenset()


@dataclass
class _Tally:
    chars: int = 0
    images: int = 0
    calls: int = 0
    results: int = 0


def estimate(
    row: TokenRow, provider: str, messages: Sequence[Message], tools: Sequence[ToolDefinition]
) -> int:
    """The pre-flight input tokens of `messages` and `tools` sent to `provider`, by its `row`."""
    fixed = row.request
    chars = 0
    rounded = 0
    for message in messages:
        tally = _Tally(chars=len(message.role.value) if row.role_names else 0)
        thinking = row.thinking is Thinking.every or (
            row.thinking is Thinking.own and message.metadata.provider == provider
        )
        _count(row, message.content, thinking, tally)
        fixed += (
            row.message
            + tally.images * row.image
            + tally.calls * row.tool_call
            + tally.results * row.tool_result
        )
        if row.each_apart:
            rounded += _tokens(row, tally.chars)
        else:
            chars += tally.chars
    if tools:
        fixed += row.tools_preamble
    for tool in tools:
        size = sum(
            len(piece) if isinstance(piece, str) else row.tool_json.length(piece)
            for piece in row.tool_text(tool)
        )
        fixed += row.tool
        if row.each_apart:
            rounded += _tokens(row, size)
        else:
            chars += size
    return fixed + rounded + (0 if row.each_apart else _tokens(row, chars))


def _tokens(row: TokenRow, chars: int) -> int:
    ratio = chars / row.chars_per_token
    return math.ceil(ratio) if row.rounding is Rounding.up else round(ratio)


def _count(row: TokenRow, blocks: Sequence[Any], thinking: bool, tally: _Tally) -> None:
    """Add what `blocks` (and the blocks inside their tool results) put in the prompt."""
    for block in blocks:
        if isinstance(block, ToolResultBlock):
            tally.results += 1
            _count(row, block.content, thinking, tally)
        elif isinstance(block, ImageBlock):
            tally.images += 1
        elif isinstance(block, ServerToolResultBlock | SearchResultBlock):
            if block.type in row.also:
                _count(row, block.content, thinking, tally)
        else:
            tally.calls += isinstance(block, ToolUseBlock)
            tally.chars += _chars(row, block, thinking)


def _chars(row: TokenRow, block: ContentBlock, thinking: bool) -> int:
    """The characters one leaf block puts in the prompt."""
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.text) if thinking else 0
    if isinstance(block, ToolUseBlock | ServerToolUseBlock):
        if isinstance(block, ServerToolUseBlock) and block.type not in row.also:
            return 0
        # a caller's message may hold what JSON cannot: refused as it is met, naming the call
        return len(block.name) + row.arguments.length(block.input, f"{block.type} {block.id} input")
    if block.type not in row.also:
        return 0
    if isinstance(block, RedactedThinkingBlock):
        return len(block.data) // 4  # base64 of encrypted text: about a quarter is text
    if isinstance(block, CompactionBlock):
        return len(block.summary) if block.summary else 0
    return 0


__all__ = ["ANTHROPIC_BLOCKS", "JsonLength", "Rounding", "Thinking", "TokenRow", "estimate"]
