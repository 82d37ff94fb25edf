"""The benchmark's data, the same for every system: one tool-using conversation in OpenAI
Chat format and one Anthropic reply, both deterministic (no clock, no randomness), and the
turn and block counts a correct translation of them must have.

OpenAI Chat is the starting point because it is the one format every peer reads or can be
given without judgement calls: LiteLLM takes it as it is, metis imports it with its own
OpenAI adapter, and the Pydantic AI and LangChain forms are built from it (untimed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

SYSTEM = (
    "You are a careful coding assistant working in the user's repository. Read files before "
    "you answer, cite the lines you rely on, and say so when something is not in the code."
)
OPENAI_MODEL = "gpt-4o"
"""The model the OpenAI Chat request names (genai-prices prices it)."""
LOCAL_MODEL = "deepseek/deepseek-v3"
"""A model only metis's local price table has, named by an OpenRouter request (the same
OpenAI Chat body otherwise): importing its history must cost what gpt-4o's does."""
ANTHROPIC_MODEL = "claude-sonnet-4-5"
"""The Anthropic model every system writes its request for (metis: `anthropic:` + this),
and the model of the reply (genai-prices prices it)."""
MAX_TOKENS = 1024

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "grep",
            "description": "Search the repository for a regular expression.",
            "parameters": {
                "type": "object",
                "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
                "required": ["pattern"],
            },
        },
    },
]


def _tool_output(cycle: int, call: int) -> str:
    """A tool result of 1–2 KB (its length varies with the cycle), like a short file listing."""
    size = 1024 + (cycle * 397 + call * 211) % 1024
    lines: list[str] = []
    total, line = 0, 0
    while total < size:
        text = f"{line + 1:4d}  def handler_{cycle}_{call}_{line}(request): return route(request, {line})\n"
        lines.append(text)
        total += len(text)
        line += 1
    return "".join(lines)[:size]


def _arguments(cycle: int, call: int) -> dict[str, Any]:
    if call == 0:
        return {"path": f"src/service/module_{cycle % 97}.py"}
    return {"pattern": f"def handler_{cycle}_", "path": "src/service"}


def _cycle(cycle: int, length: int) -> list[dict[str, Any]]:
    """The first `length` messages of cycle `cycle`: user → assistant text + 1–2 tool calls →
    their results → assistant text. Cycles alternate one and two calls (4 and 5 messages).
    A cut cycle (the end of a conversation of the length asked for) stops where a request
    can stop: after the question, after an answer without calls, or after every result."""
    calls = 1 + cycle % 2
    question = {"role": "user", "content": f"Question {cycle}: where is request {cycle} routed, and why?"}
    if length == 1:
        return [question]
    if length == 2:
        return [question, {"role": "assistant", "content": f"Request {cycle} needs no lookup."}]
    if length == 3:
        calls = 1
    tool_calls = [
        {
            "id": f"call_{cycle}_{k}",
            "type": "function",
            "function": {
                "name": "read_file" if k == 0 else "grep",
                "arguments": orjson.dumps(_arguments(cycle, k)).decode(),
            },
        }
        for k in range(calls)
    ]
    messages: list[dict[str, Any]] = [
        question,
        {"role": "assistant", "content": f"Let me look at the code for {cycle}.", "tool_calls": tool_calls},
    ]
    messages += [
        {"role": "tool", "tool_call_id": f"call_{cycle}_{k}", "content": _tool_output(cycle, k)}
        for k in range(calls)
    ]
    if length > 2 + calls:
        messages.append(
            {"role": "assistant", "content": f"Request {cycle} is routed by handler_{cycle}_0, line 1."}
        )
    return messages


def openai_messages(n: int) -> list[dict[str, Any]]:
    """The conversation's first `n` messages (the system prompt counts as one), ending where
    a request can end (see `_cycle`)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    cycle = 0
    while len(out) < n:
        full = 4 + cycle % 2
        out += _cycle(cycle, min(full, n - len(out)))
        cycle += 1
    return out


def openai_request(n: int, model: str = OPENAI_MODEL) -> dict[str, Any]:
    """The OpenAI Chat request body carrying the `n`-message conversation and the tools."""
    return {"model": model, "messages": openai_messages(n), "tools": TOOLS, "max_tokens": MAX_TOKENS}


@dataclass(frozen=True)
class Shape:
    """What a correct Anthropic translation must have: turns (the system prompt apart;
    consecutive tool results in one user turn) and content blocks in them."""

    turns: int
    blocks: int


def anthropic_shape(messages: list[dict[str, Any]]) -> Shape:
    """The Anthropic shape of an OpenAI Chat conversation (each message one text block,
    one block per tool call, one tool_result per tool message)."""
    turns, blocks, last = 0, 0, None
    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        side = "assistant" if role == "assistant" else "user"
        if side != last:
            turns += 1
            last = side
        blocks += (1 if message.get("content") else 0) + len(message.get("tool_calls") or ())
    return Shape(turns, blocks)


def shape_of(wire_messages: list[dict[str, Any]]) -> Shape:
    """The shape of an Anthropic `messages` list as a system wrote it (a string content is
    one block)."""
    blocks = 0
    for message in wire_messages:
        content = message["content"]
        blocks += 1 if isinstance(content, str) else len(content)
    return Shape(len(wire_messages), blocks)


REPLY: dict[str, Any] = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": ANTHROPIC_MODEL,
    "content": [
        {"type": "text", "text": "I'll read the router and search for the handler before answering."},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "read_file",
            "input": {"path": "src/service/router.py"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01B19r91rx91mr928946mr0",
            "name": "grep",
            "input": {"pattern": "def handler_", "path": "src/service"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 2095,
        "output_tokens": 503,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1800,
    },
}
REPLY_BYTES = orjson.dumps(REPLY)
"""The reply as it arrives: the bytes every system starts from."""
REPLY_BLOCKS = 3
REPLY_TOOL_CALLS = 2
