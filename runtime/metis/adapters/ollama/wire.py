"""Ollama's `/api/chat` wire objects, declared once (checked against ollama 0.6.3 and its
Python SDK's `ChatRequest` / `ChatResponse`).

Every read of Ollama JSON goes through these shapes (`reader.read` / `read_json`), so
pydantic-core does the type checks and a failure is one WireFormatError at its JSON path.
They are as loose as the server, whose Go decoder ignores unknown keys (`extra="allow"`:
`created_at`, `logprobs`, fields added later stay readable), and as strict as it about
types (`strict=True`: `"1024"` is not an integer, `"yes"` not a boolean). What a lax client
may send that the server itself would refuse (string tool-call `arguments`) is accepted on
the way in, as before, and never written back out.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, NotRequired

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    with_config,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from ...errors import WireFormatError
from ...usage import Count
from .._kit.images import parse_data_url

_LOOSE = ConfigDict(extra="allow", strict=True)


def _either(expected: str) -> WrapValidator:
    """A union's failures as one error at the field itself.

    pydantic names each union branch in the error location (`arguments.str`); for a value
    that is not a container those names would end up in the reported JSON path, which must
    only hold keys of the body.
    """

    def check(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("wire_type", f"must be {expected}") from None

    return WrapValidator(check)


NonEmpty = Annotated[str, Field(min_length=1)]
Number = Annotated[int | float, _either("a number")]
"""A number kept as sent (an integer stays an integer, so an import replays exactly)."""
Arguments = Annotated[dict[str, Any] | str, _either("an object (or a JSON string)")]
"""Tool-call arguments: an object from the server, a JSON string from a lax client."""


class Function(TypedDict):
    """`tool_calls[i].function`. `index` (newer servers) sits here, not beside `id`."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    name: NonEmpty
    arguments: NotRequired[Arguments | None]
    index: NotRequired[int | None]


class ToolCall(TypedDict):
    """One whole tool call (Ollama never splits a call across stream lines)."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    id: NotRequired[str | None]
    function: Function


class Turn(TypedDict):
    """What an assistant message says, in a response, a stream line or a recorded request."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    content: NotRequired[str | None]
    thinking: NotRequired[str | None]
    tool_calls: NotRequired[list[ToolCall] | None]


class ReplyMessage(Turn):
    """The assistant `message` of a response or of one stream line."""

    role: NotRequired[str | None]
    images: NotRequired[list[Any] | None]


@with_config(ConfigDict(extra="ignore", strict=True))
class Counts(TypedDict):
    """The counters of a final response, what Ollama's counter rule (`facts.USAGE`) reads:
    `prompt_eval_count` (omitted when the prompt was all cached) and `eval_count`."""

    prompt_eval_count: NotRequired[Count]
    eval_count: NotRequired[Count]


class Final(TypedDict):
    """The fields of a final (`done: true`) response: model, reason, counters, timings (ns)."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    model: NotRequired[str | None]
    done_reason: NotRequired[str | None]
    prompt_eval_count: NotRequired[Count]
    eval_count: NotRequired[Count]
    total_duration: NotRequired[int]
    load_duration: NotRequired[int]
    prompt_eval_duration: NotRequired[int]
    eval_duration: NotRequired[int]


class ChatResponse(Final):
    """A `stream: false` response: one finished message (`done` absent or true)."""

    message: ReplyMessage
    done: NotRequired[Literal[True]]


class StreamLine(Final):
    """One NDJSON line of a streamed response: a delta, the final line, or an error line
    (`{"error": "..."}`, which the server also sends mid-stream)."""

    message: NotRequired[ReplyMessage | None]
    done: NotRequired[bool]
    error: NotRequired[Any]


class ErrorDetail(TypedDict):
    """An `error` object: not Ollama's own (its errors are text), a proxy's in front of it."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    message: NotRequired[Any]


class ErrorBody(TypedDict):
    """`{"error": "<text>"}`: an HTTP error body or a stream's error line (the line's other
    fields are kept, not read); a proxy's `{"error": {"message"}}` too."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    error: str | ErrorDetail


# --- the request body (read by the importer) ------------------------------------------------


class Image(NamedTuple):
    """A request image: its raw base64 and the media type its bytes (or data URL) say, if any."""

    data: str
    media_type: str | None


_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def _image(value: str) -> Image:
    """Raw base64 (the server's form) or a data URL (what lax clients send), decoded once."""
    try:
        parsed = parse_data_url(value)
    except WireFormatError as exc:
        raise ValueError(exc.message) from None
    if parsed is not None:
        return Image(parsed[1], parsed[0])
    try:
        head = base64.b64decode(value, validate=True)[:16]
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"image is not valid base64: {exc}") from None
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return Image(value, "image/webp")
    for magic, media_type in _IMAGE_MAGIC:
        if head.startswith(magic):
            return Image(value, media_type)
    return Image(value, None)


if TYPE_CHECKING:
    RequestImage = Image
else:  # a non-empty string, read into an Image
    RequestImage = Annotated[NonEmpty, AfterValidator(_image)]


class RequestMessage(Turn):
    """One message of a recorded request; which fields a role may carry is the importer's
    business (it lists what it cannot carry), so every field but `role` is optional here."""

    role: Literal["system", "user", "assistant", "tool"]
    tool_name: NotRequired[str | None]
    images: NotRequired[list[RequestImage] | None]


class RequestFunction(TypedDict):
    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    name: NonEmpty
    description: NotRequired[str | None]
    parameters: NotRequired[dict[str, Any] | None]


class RequestTool(TypedDict):
    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    type: NotRequired[Literal["function"]]
    function: RequestFunction


class Options(TypedDict):
    """`options`: the sampling fields metis maps, and any other model option kept as is."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    num_predict: NotRequired[int]
    temperature: NotRequired[Number]
    top_p: NotRequired[Number]
    stop: NotRequired[list[str]]


class ChatRequest(TypedDict):
    """A `/api/chat` request body. `stream` defaults to true on the server."""

    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    model: NonEmpty
    messages: NotRequired[list[RequestMessage] | None]
    tools: NotRequired[list[RequestTool] | None]
    stream: NotRequired[bool]
    options: NotRequired[Options | None]


__all__ = [
    "ChatRequest",
    "ChatResponse",
    "Counts",
    "ErrorBody",
    "ErrorDetail",
    "Final",
    "Function",
    "Image",
    "Options",
    "ReplyMessage",
    "RequestMessage",
    "RequestTool",
    "StreamLine",
    "ToolCall",
    "Turn",
]
