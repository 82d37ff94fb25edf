"""Gemini contract: google-genai 3.4's own pydantic models judge our bodies and build our fixtures.

google-genai's models (`types.Content`, `types.Tool`, `types.GenerationConfig`,
`types.GenerateContentResponse`, ...) accept camelCase, reject unknown keys and, read from JSON
text, reject invalid base64 in `inlineData.data` / `thoughtSignature` (bytes fields): a strict
contract. Unlike the anthropic/openai TypedDicts they hold real lists, not lazy `Iterable`s,
but the validated value is still walked (`materialize`) so a lazily validated field added in
a later SDK could not slip through unchecked.

google-genai's enums are lenient: an unknown value (`"mode": "SOMETIMES"`) is accepted with only
a UserWarning "... is not a valid ...", for forward compatibility. The contract turns that
warning into a violation, or a misspelled enum value would pass.

The SDK cannot say everything the API enforces, so `check_request` adds the API's documented
rules: roles are `user`/`model`, a part holds exactly one kind of data, and a model turn with
N function calls is followed by one user turn with N function responses (matching names).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
from google.genai import types
from pydantic import BaseModel

REQUEST_KEYS = frozenset(
    {
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "generationConfig",
        "safetySettings",
        "cachedContent",
    }
)
"""Top-level fields of a generateContent REST body (the model is in the URL)."""

DATA_FIELDS = (
    "text",
    "inline_data",
    "file_data",
    "function_call",
    "function_response",
    "executable_code",
    "code_execution_result",
    "tool_call",
    "tool_response",
)
"""Part fields of which exactly one is set (types.Part docstring); `thought`,
`thought_signature` and the metadata fields ride along with one of them."""


class ContractViolation(ValueError):
    """The body breaks a rule of the API that the SDK models do not encode."""


def materialize(value: Any) -> Any:
    """The validated value with every lazy iterator drained into a list, recursively."""
    if isinstance(value, BaseModel):
        return {name: materialize(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, Mapping):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, str | bytes | bytearray):
        return value
    if isinstance(value, list | tuple | Iterator) or (
        isinstance(value, Iterable) and not isinstance(value, set)
    ):
        return [materialize(v) for v in value]
    return value


def _validate(model: type[BaseModel], value: Any) -> BaseModel:
    """JSON-mode validation (bytes fields must hold base64, as on the wire); an enum value the
    SDK does not know is a violation, not a warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = model.model_validate_json(orjson.dumps(value))
        materialize(parsed)
    unknown = [str(w.message) for w in caught if "is not a valid" in str(w.message)]
    if unknown:
        raise ContractViolation(f"{model.__name__}: {'; '.join(unknown)}")
    return parsed


def check_request(body: dict[str, Any]) -> None:
    """Raise (pydantic ValidationError or ContractViolation) unless `body` is a valid request."""
    unknown = set(body) - REQUEST_KEYS
    if unknown:
        raise ContractViolation(f"unknown top-level fields: {sorted(unknown)}")
    if not isinstance(body.get("contents"), list):
        raise ContractViolation("`contents` must be a list")
    contents = [_validate(types.Content, item) for item in body["contents"]]
    if "systemInstruction" in body:
        _validate(types.Content, body["systemInstruction"])
    tools = body.get("tools", [])
    tools = [tools] if isinstance(tools, dict) else tools  # one object stands for a one-element list
    for tool in tools:
        _validate(types.Tool, tool)
    if "toolConfig" in body:
        _validate(types.ToolConfig, body["toolConfig"])
    generation = body.get("generationConfig", {})
    _validate(types.GenerationConfig, generation)
    # The SDK's request-side config gathers the same pieces; it must accept them together.
    composite = {k: body[k] for k in ("systemInstruction", "toolConfig") if k in body}
    if "tools" in body:
        composite["tools"] = tools
    _validate(types.GenerateContentConfig, {**generation, **composite})
    _check_turns([c for c in contents if isinstance(c, types.Content)])


def _check_turns(contents: list[types.Content]) -> None:
    for i, content in enumerate(contents):
        if content.role not in ("user", "model"):
            raise ContractViolation(f"contents[{i}].role must be user or model, not {content.role!r}")
        for j, part in enumerate(content.parts or []):
            kinds = [name for name in DATA_FIELDS if getattr(part, name) is not None]
            if len(kinds) != 1:
                raise ContractViolation(
                    f"contents[{i}].parts[{j}] holds {kinds or 'no data'}; exactly one is allowed"
                )
    for i, content in enumerate(contents):
        calls = [p.function_call for p in content.parts or [] if p.function_call is not None]
        if content.role != "model" or not calls:
            continue
        following = contents[i + 1] if i + 1 < len(contents) else None
        responses = (
            [p.function_response for p in following.parts or [] if p.function_response is not None]
            if following is not None
            else []
        )
        if following is None:
            continue  # a trailing call turn: the caller is about to run the tools
        if len(responses) != len(calls):
            raise ContractViolation(
                f"contents[{i}] has {len(calls)} function calls but contents[{i + 1}] {len(responses)} responses"
            )
        if sorted(c.name or "" for c in calls) != sorted(r.name or "" for r in responses):
            raise ContractViolation(
                f"function response names of contents[{i + 1}] do not match contents[{i}]"
            )
        ids = [c.id for c in calls if c.id]
        if ids and sorted(ids) != sorted(r.id or "" for r in responses):
            raise ContractViolation(f"function response ids of contents[{i + 1}] do not echo the call ids")


def check_response(body: dict[str, Any]) -> None:
    """Raise unless the SDK's GenerateContentResponse accepts `body`."""
    _validate(types.GenerateContentResponse, body)


def _dump(model: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


USAGE = types.GenerateContentResponseUsageMetadata(
    prompt_token_count=412,
    candidates_token_count=58,
    thoughts_token_count=96,
    cached_content_token_count=256,
    total_token_count=566,
)
SIGNATURE = b"\x12\x34gemini-thought-signature\xfe\xff"


def response_fixture() -> dict[str, Any]:
    """A whole response: text, two parallel calls (the first signed), usage; built by the SDK."""
    response = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(
                    role="model",
                    parts=[
                        types.Part(text="Checking both cities."),
                        types.Part(
                            function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                            thought_signature=SIGNATURE,
                        ),
                        types.Part(
                            function_call=types.FunctionCall(name="get_weather", args={"city": "Oslo"})
                        ),
                    ],
                ),
                finish_reason=types.FinishReason.STOP,
                index=0,
            )
        ],
        usage_metadata=USAGE,
        model_version="gemini-2.5-flash",
        response_id="resp-contract-1",
    )
    return _dump(response)


def stream_fixture() -> list[bytes]:
    """The same response as `alt=sse` chunks: text in two deltas, then both calls with the
    finish reason and the usage, each chunk a GenerateContentResponse built by the SDK."""

    def chunk(parts: list[types.Part], **extra: Any) -> bytes:
        candidate = types.Candidate(content=types.Content(role="model", parts=parts), **extra)
        response = types.GenerateContentResponse(
            candidates=[candidate],
            model_version="gemini-2.5-flash",
            response_id="resp-contract-1",
            **({"usage_metadata": USAGE} if "finish_reason" in extra else {}),
        )
        return b"data: " + orjson.dumps(_dump(response)) + b"\r\n\r\n"

    return [
        chunk([types.Part(text="Checking ")]),
        chunk([types.Part(text="both cities.")]),
        chunk(
            [
                types.Part(
                    function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                    thought_signature=SIGNATURE,
                ),
                types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Oslo"})),
            ],
            finish_reason=types.FinishReason.STOP,
            index=0,
        ),
    ]


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A quota error as AI Studio sends it (HTTP 429, google.rpc.Status shape)."""
    return 429, {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
        }
    }


__all__ = [
    "ContractViolation",
    "check_request",
    "check_response",
    "error_fixture",
    "materialize",
    "response_fixture",
    "stream_fixture",
]
