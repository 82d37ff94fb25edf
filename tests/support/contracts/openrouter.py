"""Contract of the OpenRouter wire: the OpenAI Chat Completions contract plus OpenRouter's extensions.

OpenRouter has no official Python SDK installed here, so requests are validated with the openai
SDK's `CompletionCreateParams` (the same deep iterator walk and strict key check as
`contracts.openai`), with OpenRouter's extension keys allowed, and then held to explicit rules
for those extensions (provider-wire-formats.md §5):

- `reasoning`: an object of `effort` | `max_tokens` (not both), `exclude`, `enabled`;
- `reasoning_details` on assistant messages: items with a known `type`, an integer `index`,
  and the field their type needs (`text`, `summary` or `data`);
- `cache_control` (on content parts, tools, or top level): `{"type": "ephemeral", "ttl"?: "5m" | "1h"}`;
- a system message that carries `cache_control` is a parts array (a string cannot carry it);
- a tool message's content may hold the user-message parts (OpenRouter's
  `ToolResponseMessage.content` is `string | ChatMessageContentItem[]`; the openai SDK's tool
  message takes text parts only): those parts are checked as a user message's, and the SDK
  walk sees the tool message with its text parts only;
- `video_url` parts in user messages (https://openrouter.ai/docs/features/multimodal/videos):
  `{"type": "video_url", "video_url": {"url"}}`, checked here, out of the SDK walk.

Responses and chunks parse with the SDK models (their `extra="allow"` keeps `reasoning_details`,
`native_finish_reason`, `provider`), after an explicit check of the extension fields.
"""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionUserMessageParam
from pydantic import TypeAdapter

from .openai import ContractError, materialize, sdk_validate, unknown_keys

_USER_MESSAGE = TypeAdapter(ChatCompletionUserMessageParam)

TOP_EXTENSIONS = (
    "reasoning",
    "provider",
    "plugins",
    "models",
    "transforms",
    "usage",
    "cache_control",
    "route",
)
MESSAGE_EXTENSIONS = ("reasoning_details", "reasoning")
PART_EXTENSIONS = ("cache_control",)
TOOL_EXTENSIONS = ("cache_control",)
EFFORTS = frozenset({"xhigh", "high", "medium", "low", "minimal", "none"})
DETAIL_TYPES = {"reasoning.text": "text", "reasoning.summary": "summary", "reasoning.encrypted": "data"}


def _reasoning_problems(reasoning: Any) -> list[str]:
    if not isinstance(reasoning, dict):
        return ["reasoning must be an object"]
    problems = [
        f"reasoning.{k} is not a reasoning option"
        for k in reasoning
        if k not in {"effort", "max_tokens", "exclude", "enabled"}
    ]
    if "effort" in reasoning and "max_tokens" in reasoning:
        problems.append("reasoning takes effort or max_tokens, not both")
    if "effort" in reasoning and reasoning["effort"] not in EFFORTS:
        problems.append(f"reasoning.effort {reasoning['effort']!r} is not one of {sorted(EFFORTS)}")
    tokens = reasoning.get("max_tokens")
    if "max_tokens" in reasoning and (not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0):
        problems.append("reasoning.max_tokens must be a positive integer")
    problems += [
        f"reasoning.{k} must be a boolean"
        for k in ("exclude", "enabled")
        if k in reasoning and not isinstance(reasoning[k], bool)
    ]
    return problems


def _details_problems(details: Any, path: str) -> list[str]:
    if not isinstance(details, list):
        return [f"{path} must be a list"]
    problems: list[str] = []
    for i, item in enumerate(details):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be an object")
            continue
        field = DETAIL_TYPES.get(item.get("type"))  # type: ignore[arg-type]
        if field is None:
            problems.append(f"{where}.type {item.get('type')!r} is not a reasoning_details type")
        elif not isinstance(item.get(field), str):
            problems.append(f"{where}.{field} must be a string")
        index = item.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            problems.append(f"{where}.index must be an integer")
    return problems


def _cache_problems(control: Any, path: str) -> list[str]:
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        return [f"{path} must be {{'type': 'ephemeral'}}"]
    problems = [f"{path}.{k} is not a cache_control field" for k in control if k not in ("type", "ttl")]
    if "ttl" in control and control["ttl"] not in ("5m", "1h"):
        problems.append(f"{path}.ttl must be '5m' or '1h'")
    return problems


def extension_problems(body: dict[str, Any]) -> list[str]:
    """Violations of OpenRouter's own request rules (the extensions the openai SDK does not know)."""
    problems: list[str] = []
    if "reasoning" in body:
        problems += _reasoning_problems(body["reasoning"])
    if "cache_control" in body:
        problems += _cache_problems(body["cache_control"], "cache_control")
    for i, msg in enumerate(body.get("messages") or []):
        if not isinstance(msg, dict):
            continue
        if "reasoning_details" in msg:
            if msg.get("role") != "assistant":
                problems.append(f"messages[{i}].reasoning_details is only for assistant messages")
            problems += _details_problems(msg["reasoning_details"], f"messages[{i}].reasoning_details")
        content = msg.get("content")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and "cache_control" in part:
                problems += _cache_problems(
                    part["cache_control"], f"messages[{i}].content[{j}].cache_control"
                )
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            problems += _cache_problems(tool["cache_control"], f"tools[{i}].cache_control")
    return problems


def _video_problems(part: dict[str, Any], path: str) -> list[str]:
    """An OpenRouter `video_url` part: `{"type": "video_url", "video_url": {"url": <non-empty>}}`."""
    video = part.get("video_url")
    problems = [
        f"{path}.{k} is not a video_url part field"
        for k in part
        if k not in {"type", "video_url", *PART_EXTENSIONS}
    ]
    if (
        not isinstance(video, dict)
        or set(video) != {"url"}
        or not isinstance(video["url"], str)
        or not video["url"]
    ):
        problems.append(f"{path}.video_url must be an object with one non-empty url")
    return problems


def _sdk_view(body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the body as the openai SDK can check it, problems with OpenRouter's own parts).

    A user message's `video_url` parts are checked here and left out of the view; a tool
    message's non-text parts are checked as a user message's parts and left out too (see
    the module doc)."""
    messages: list[Any] = []
    problems: list[str] = []
    for i, msg in enumerate(body.get("messages") or []):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            messages.append(msg)
            continue
        kept = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "video_url" and msg.get("role") == "user":
                problems += _video_problems(part, f"messages[{i}].content[{j}]")
            elif kind != "text" and msg.get("role") == "tool":
                materialize(_USER_MESSAGE.validate_python({"role": "user", "content": [part]}))
            else:
                kept.append(part)
        empty = "" if msg.get("role") == "tool" else [{"type": "text", "text": ""}]
        messages.append({**msg, "content": kept or empty})
    return {**body, "messages": messages}, problems


def check_request(body: dict[str, Any]) -> None:
    """Raise when `body` is not a valid OpenRouter request (SDK deep walk, strict keys, extension rules)."""
    view, problems = _sdk_view(body)
    sdk_validate(view)
    problems += unknown_keys(
        view, top=TOP_EXTENSIONS, message=MESSAGE_EXTENSIONS, part=PART_EXTENSIONS, tool=TOOL_EXTENSIONS
    )
    problems += extension_problems(body)
    if problems:
        raise ContractError(f"not a valid OpenRouter request: {problems}")


def check_response(body: dict[str, Any]) -> ChatCompletion:
    """A non-streamed OpenRouter response: extension fields checked, then the SDK model."""
    for i, choice in enumerate(body.get("choices") or []):
        details = (choice.get("message") or {}).get("reasoning_details")
        if details is not None:
            problems = _details_problems(details, f"choices[{i}].message.reasoning_details")
            if problems:
                raise ContractError(str(problems))
    return ChatCompletion.model_validate(body)


def check_chunk(chunk: dict[str, Any]) -> ChatCompletionChunk:
    """One stream chunk (not an error chunk) parsed by the SDK model."""
    return ChatCompletionChunk.model_validate(chunk)


# --- fixtures built through the SDK's response models --------------------------------------------

_ID = "gen-1763821500-PlOkMiJnUhBygVtFcRdX"
_MODEL = "anthropic/claude-sonnet-4.6"
_SIG = "EpYBCkYIBxgCKkAh7Yq2mZ9xR4vN1tL8cJ5hW3bDs0Ke6Uo9Ia2Sd5Fg8Hj1Kl4Zx7Cv0Bn3Mq6We9Rt2Yu5Io8Pa1Sd4Fg7Hj0Kl3Zx6Cv9Bn2Mq5We8Rt1Yu4Io7Pa0SDA=="
_REASONING = "Two cities, so two parallel calls."
_TEXT = "Checking both cities now."
_CALLS = [
    ("toolu_vrtx_01Tq8Wm2Lk5Jh9Gf3Ds6Az1X", "get_weather", '{"city":"Paris"}'),
    ("toolu_vrtx_01Rp4Nb7Vc0Xz3Lk6Jh9Gf2D", "get_weather", '{"city":"Tokyo"}'),
]
_USAGE = {
    "prompt_tokens": 412,
    "completion_tokens": 96,
    "total_tokens": 508,
    "cost": 0.002676,
    "is_byok": False,
    "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 380},
    "completion_tokens_details": {"reasoning_tokens": 18},
}
_DETAIL = {
    "type": "reasoning.text",
    "text": _REASONING,
    "signature": _SIG,
    "format": "anthropic-claude-v1",
    "index": 0,
}


def response_fixture() -> dict[str, Any]:
    """Text, two parallel tool calls (Vertex ids), reasoning_details and usage, built by `ChatCompletion`."""
    completion = ChatCompletion.model_validate(
        {
            "id": _ID,
            "provider": "Google Vertex",
            "model": _MODEL,
            "object": "chat.completion",
            "created": 1763821500,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "native_finish_reason": "tool_use",
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": _TEXT,
                        "refusal": None,
                        "reasoning": _REASONING,
                        "reasoning_details": [_DETAIL],
                        "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                            for i, n, a in _CALLS
                        ],
                    },
                }
            ],
            "usage": _USAGE,
        }
    )
    return completion.model_dump(mode="json", exclude_unset=True)


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
    choice: dict[str, Any] = {
        "index": 0,
        "delta": {"role": "assistant", "content": "", **delta},
        "finish_reason": finish,
    }
    if finish is not None:
        choice["native_finish_reason"] = "tool_use"
    body: dict[str, Any] = {
        "id": _ID,
        "provider": "Google Vertex",
        "model": _MODEL,
        "object": "chat.completion.chunk",
        "created": 1763821500,
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = usage
    chunk = ChatCompletionChunk.model_validate(body)
    return b"data: " + json.dumps(chunk.model_dump(mode="json", exclude_unset=True)).encode() + b"\n\n"


def stream_fixture() -> list[bytes]:
    """The same response streamed the OpenRouter way: comments, reasoning fragments, finish twice."""
    text_detail = {k: v for k, v in _DETAIL.items() if k != "signature"}
    out = [b": OPENROUTER PROCESSING\n\n"]
    out.append(_chunk({"reasoning": _REASONING, "reasoning_details": [text_detail]}))
    out.append(
        _chunk(
            {
                "reasoning_details": [
                    {"type": "reasoning.text", "signature": _SIG, "format": "anthropic-claude-v1", "index": 0}
                ]
            }
        )
    )
    out += [_chunk({"content": piece}) for piece in ("Checking ", "both cities now.")]
    for k, (call_id, name, args) in enumerate(_CALLS):
        out.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": k,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        out.append(
            _chunk({"tool_calls": [{"index": k, "type": "function", "function": {"arguments": args}}]})
        )
    out.append(_chunk({}, finish="tool_calls"))
    out.append(b": OPENROUTER PROCESSING\n\n")
    out.append(_chunk({}, finish="tool_calls", usage=_USAGE))
    out.append(b"data: [DONE]\n\n")
    return out


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A 429 from an upstream, as OpenRouter wraps it (int code, metadata.raw)."""
    return 429, {
        "error": {
            "code": 429,
            "message": "Provider returned error",
            "metadata": {
                "raw": "anthropic/claude-sonnet-4.6 is temporarily rate-limited upstream. Please retry shortly.",
                "provider_name": "Google Vertex",
            },
        },
        "user_id": "user_2yQ8mKpXz1R4vN7tL0cJ5hW9bDs",
    }


__all__ = [
    "check_chunk",
    "check_request",
    "check_response",
    "error_fixture",
    "extension_problems",
    "response_fixture",
    "stream_fixture",
]
