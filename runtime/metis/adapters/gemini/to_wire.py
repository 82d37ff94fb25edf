"""Canonical messages -> a generateContent request body (camelCase, as the REST API documents).

- Roles are `user` and `model`; system messages become the top-level `systemInstruction`; tool
  results are `functionResponse` parts inside a `user` content, and a parallel batch is ONE user
  content with the responses in the order of their calls.
- Calls usually carry no id. A call's Gemini id (when Gemini gave one) is echoed back from the
  session's ToolIdMap; other calls are paired with their responses by order and name. A foreign
  provider's id is never sent.
- Replay data (thought signatures, extra parts, arguments Gemini sent as text) is used only for
  messages this adapter produced for this endpoint kind (`provider_raw.endpoint`); those turns go
  back exactly as Gemini sent them. Other turns of the current turn get Google's documented
  `skip_thought_signature_validator` on their first call.
- History starting with a model turn is sent as is, with a WARN: no user turn is invented.
- Tool results travel as `{"output": <text>}`, or `{"error": <text>}` when `is_error`; result
  text that is a JSON object is sent as that object (Gemini treats an object without
  `output`/`error` keys as the whole output; an object with an `error` key as error details),
  wrapped in `output`/`error` when sending it bare would flip its error meaning. The importer
  reverses this, so a recorded response object round-trips unchanged.
- Canonical options go where the facts row says (structured output as `responseMimeType`
  application/json + `responseJsonSchema`); `provider_options["gemini"]`, then `extra`, are
  deep-merged last, other providers' options reported as dropped (`_options.own_fields`).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from typing import Any

from metis_schema.v2 import (
    AdapterCapabilities,
    ContentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from typing_extensions import TypedDict

from ... import _json
from ...errors import InvariantError
from .._lossy import drop_block
from .._options import merge, own_fields, put
from .._schema import uses_refs
from .._shared import image_base64, own_raw, parse_data_url
from .._wire import read
from ..base import AdapterOptions, WireBody
from .facts import ENDPOINT_KIND, FACTS, NAME, SKIP_SIGNATURE

log = logging.getLogger("metis.adapters.gemini")

INCLUDE_THOUGHTS = "generationConfig.thinkingConfig.includeThoughts"
"""Written from the thinking budget (on unless the budget is 0); an import takes that value
back out, any other stays Gemini's own."""

_IMAGE_TOKENS = 258
"""Gemini bills an image up to 384x384 px as 258 tokens (larger ones tile at 258 each)."""
_CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 3


class Replay(TypedDict, total=False):
    """The replay data from_wire keeps in a Gemini message's provider_raw."""

    endpoint: str
    part_signatures: list[tuple[int, str]]
    extra_parts: list[tuple[int, dict[str, Any]]]
    unparsed_arguments: dict[str, str]
    string_args: list[str]


def write_request(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
    caps: AdapterCapabilities,
) -> WireBody:
    """Canonical messages -> a generateContent body (see the module docstring)."""
    writer = _Writer(messages, options, caps)
    contents = writer.contents()
    body: WireBody = {}
    if writer.system_parts:
        body["systemInstruction"] = {"parts": writer.system_parts}
    body["contents"] = contents
    if tools:
        body["tools"] = [{"functionDeclarations": [declaration(tool) for tool in tools]}]
    tool_config = FACTS.tool_choice_to_wire(options.tool_choice)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    FACTS.options_to_wire({option: getattr(options, option) for option in FACTS.options}, body)
    if options.thinking_budget is not None:  # thoughts are shown whenever thinking is on
        put(body, INCLUDE_THOUGHTS, options.thinking_budget != 0)
    FACTS.output_schema_to_wire(options.output_schema, body)
    _fill_missing_signatures(contents, options.session_id, exact=writer.exact, start=writer.current_turn)
    if contents and contents[0]["role"] == "model":
        log.warning(
            "gemini history starts with a model turn; sent as is (no user turn invented)",
            extra={"session_id": options.session_id, "adapter": NAME, "reason": "history starts with model"},
        )
    merge(body, own_fields(options, NAME))
    return body


def declaration(tool: ToolDefinition) -> dict[str, Any]:
    """A functionDeclaration. A schema with no properties is left out: Gemini rejects an OBJECT
    parameters schema whose `properties` is empty."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    schema = tool.input_schema
    if uses_refs(schema):
        # `parameters` is Gemini's OpenAPI subset, which has no references; the JSON Schema
        # field takes a v2 schema with $defs/$ref as it is.
        out["parametersJsonSchema"] = schema
    elif schema.get("properties") or schema.get("type") not in ("object", "OBJECT", None):
        out["parameters"] = schema
    return out


def estimate_input_tokens(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
    """ceil(chars / 4) of every text, thought, tool call (name + JSON args), tool result and
    tool declaration (JSON), + 258 per image + 3 per message.

    Gemini's tokenizer averages about four characters of English or code per token; images
    are billed per tile (258 tokens up to 384x384 px), so a large image is undercounted.
    Measured against the hand-written fixtures' promptTokenCount in tests/test_gemini_adapter.py
    (test_estimate_error_is_bounded): 6.7-15.7% on prompts of 200+ tokens (code is the worst:
    it tokenizes denser), +4 tokens on a 10-token sentence.
    """
    chars = 0
    images = 0
    for message in messages:
        for block in message.content:
            c, i = _block_size(block)
            chars += c
            images += i
    for tool in tools:
        chars += len(json.dumps(declaration(tool), ensure_ascii=False))
    return math.ceil(chars / _CHARS_PER_TOKEN) + images * _IMAGE_TOKENS + _MESSAGE_OVERHEAD * len(messages)


def _block_size(block: ContentBlock) -> tuple[int, int]:
    """(characters, images) a block contributes to the estimate."""
    if isinstance(block, TextBlock | ThinkingBlock):
        return len(block.text), 0
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(json.dumps(block.input, ensure_ascii=False)), 0
    if isinstance(block, ImageBlock):
        return 0, 1
    if isinstance(block, ToolResultBlock):
        chars = images = 0
        for inner in block.content:
            c, i = _block_size(inner)
            chars, images = chars + c, images + i
        return chars, images
    return 0, 0


def _fill_missing_signatures(
    contents: list[dict[str, Any]], session_id: str, *, exact: set[int], start: int
) -> None:
    """Google's documented fallback for history without signatures (another provider's turns,
    or Gemini turns whose signatures cannot be replayed here): Gemini 3 validates only the
    current turn (after the last plain user message), on the first functionCall of each model
    step there, so exactly those parts get `skip_thought_signature_validator`. Turns replayed
    exactly (`exact`: indexes into contents) are left as Gemini sent them. One WARN per request."""
    filled = 0
    for i in range(start, len(contents)):
        content = contents[i]
        if content["role"] != "model" or i in exact:
            continue
        first = next((part for part in content["parts"] if "functionCall" in part), None)
        if first is not None and "thoughtSignature" not in first:
            first["thoughtSignature"] = SKIP_SIGNATURE
            filled += 1
    if filled:
        reason = "function calls in the current turn have no gemini thought signature"
        log.warning(
            "session %s: %d gemini function-call turn(s) sent with %s: %s",
            session_id,
            filled,
            SKIP_SIGNATURE,
            reason,
            extra={"session_id": session_id, "adapter": NAME, "reason": reason},
        )


def _call_map(messages: Sequence[Message]) -> dict[str, tuple[int, str]]:
    """Canonical call id -> (its order among the history's calls, its name); the first wins."""
    calls: dict[str, tuple[int, str]] = {}
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.id not in calls:
                calls[block.id] = (len(calls), block.name)
    return calls


class _Writer:
    """Builds `contents` (and the system parts) from canonical messages for one request."""

    def __init__(
        self, messages: Sequence[Message], options: AdapterOptions, caps: AdapterCapabilities
    ) -> None:
        self.messages = messages
        self.options = options
        self.caps = caps
        self.system_parts: list[dict[str, Any]] = []
        self.exact: set[int] = set()  # contents that replay a Gemini turn of this endpoint exactly
        self.current_turn = 0  # index in contents after the last user message
        self.gemini_ids = options.tool_ids.issued_by(NAME)  # canonical ids Gemini itself issued
        self.calls = _call_map(messages)

    def contents(self) -> list[dict[str, Any]]:
        """The `contents` array (and `system_parts`, `exact`, `current_turn` on the side)."""
        contents: list[dict[str, Any]] = []
        batch: list[tuple[int, dict[str, Any]]] = []  # functionResponse parts by call order
        for i, message in enumerate(self.messages):
            if message.role == Role.tool:
                self._tool_message(message, i, batch)
                continue
            if batch:
                contents.append({"role": "user", "parts": [part for _, part in sorted(batch, key=_order)]})
                batch = []
            if message.role == Role.user:
                parts = self._user_parts(message)
                if parts:
                    contents.append({"role": "user", "parts": parts})
                    self.current_turn = len(contents)
            elif message.role == Role.system:
                self.system_parts.extend(
                    {"text": block.text}
                    for block in message.content
                    if isinstance(block, TextBlock) and block.text
                )
            else:
                parts, own = self._model_parts(message)
                if parts:
                    if own:
                        self.exact.add(len(contents))
                    contents.append({"role": "model", "parts": parts})
        if batch:
            contents.append({"role": "user", "parts": [part for _, part in sorted(batch, key=_order)]})
        return contents

    # user and tool messages

    def _user_parts(self, message: Message) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock):
                if block.text:
                    parts.append({"text": block.text})
            elif isinstance(block, ImageBlock):
                part = self._image(block, message, index)
                if part is not None:
                    parts.append(part)
            else:
                _drop(message, index, block.type, "not allowed in a user message")
        return parts

    def _image(self, block: ImageBlock, message: Message, index: int) -> dict[str, Any] | None:
        """inlineData for base64 / file_ref / data: URLs, fileData for other URLs."""
        accepted = self.caps.accepted_image_media_types
        if not self.caps.supports_images or (accepted and block.media_type not in accepted):
            _drop(message, index, "image", f"{self.options.model} does not accept {block.media_type} images")
            return None
        if block.source.kind == MediaSourceKind.url:
            parsed = parse_data_url(block.source.data)
            if parsed is None:
                return {"fileData": {"mimeType": block.media_type, "fileUri": block.source.data}}
            return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
        return {"inlineData": {"mimeType": block.media_type, "data": image_base64(block, self.options)}}

    def _tool_message(self, message: Message, position: int, batch: list[tuple[int, dict[str, Any]]]) -> None:
        """Adds the message's functionResponse parts to `batch`, keyed by their call's order."""
        for index, block in enumerate(message.content):
            if not isinstance(block, ToolResultBlock):
                _drop(message, index, block.type, "a tool message carries only tool_result blocks")
                continue
            call = self.calls.get(block.tool_use_id)
            if call is None:
                raise InvariantError(
                    [f"tool_result {block.tool_use_id} answers no tool_use in the history (spec §5.2.2)"],
                    provider=NAME,
                    message_id=message.id,
                    path=f"messages[{position}].content[{index}]",
                )
            order, name = call
            batch.append((order, {"functionResponse": self._response(block, name, message, index)}))

    def _response(self, block: ToolResultBlock, name: str, message: Message, index: int) -> dict[str, Any]:
        text = "\n".join(inner.text for inner in block.content if isinstance(inner, TextBlock))
        response: dict[str, Any] = {}
        if block.tool_use_id in self.gemini_ids:
            response["id"] = self.options.tool_ids.outgoing(block.tool_use_id, NAME)
        response["name"] = name
        response["response"] = _result_object(text, is_error=block.is_error)
        media = []
        for inner in block.content:
            if isinstance(inner, ImageBlock):
                part = self._image(inner, message, index)
                if part is not None:
                    media.append(part)
        if media:
            response["parts"] = media
        return response

    # model messages

    def _model_parts(self, message: Message) -> tuple[list[dict[str, Any]], bool]:
        """The parts of an assistant message, and whether they replay our own turn exactly
        (`own`: this adapter wrote the message's replay data, for this endpoint kind)."""
        raw = own_raw(message, NAME)
        own = raw.get("endpoint") == ENDPOINT_KIND
        replay = (
            read(Replay, raw, provider=NAME, path="provider_raw", what="replay data") if own else Replay()
        )
        signatures = _signature_map(replay.get("part_signatures", []), message)
        extra = replay.get("extra_parts", [])
        unparsed = replay.get("unparsed_arguments", {})
        as_text = set(replay.get("string_args", []))
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            parts.extend(_extra_at(extra, index))
            part = self._model_part(block, message, index, own=own, unparsed=unparsed, as_text=as_text)
            if part is None:
                continue
            if index in signatures:
                part["thoughtSignature"] = signatures[index]
            parts.append(part)
        parts.extend(_extra_at(extra, len(message.content)))
        return parts, own

    def _model_part(
        self,
        block: ContentBlock,
        message: Message,
        index: int,
        *,
        own: bool,
        unparsed: dict[str, str],
        as_text: set[str],
    ) -> dict[str, Any] | None:
        """One block of an assistant message (`unparsed`, `as_text`: replay data, when own)."""
        if isinstance(block, TextBlock):
            return {"text": block.text} if block.text else None
        if isinstance(block, ToolUseBlock):
            call: dict[str, Any] = {}
            if block.id in self.gemini_ids:
                call["id"] = self.options.tool_ids.outgoing(block.id, NAME)
            call["name"] = block.name
            call["args"] = _replay_args(unparsed.get(block.id), block.input, as_text=block.id in as_text)
            return {"functionCall": call}
        if isinstance(block, ThinkingBlock):
            return self._thinking(block, message, index, own=own)
        reason = (
            "gemini has no redacted thinking; the blob is another provider's"
            if isinstance(block, RedactedThinkingBlock)
            else "not allowed in an assistant message"
        )
        _drop(message, index, block.type, reason)
        return None

    def _thinking(
        self, block: ThinkingBlock, message: Message, index: int, *, own: bool
    ) -> dict[str, Any] | None:
        if not own:
            producer = message.metadata.provider or "an unknown provider"
            reason = (
                f"thinking from {producer} cannot be replayed to gemini"
                if producer != NAME
                else "gemini thinking without replay data for this endpoint"
            )
            _drop(message, index, "thinking", reason)
            return None
        if not self.caps.supports_thinking:
            _drop(message, index, "thinking", f"{self.options.model} does not support thinking")
            return None
        part: dict[str, Any] = {"text": block.text, "thought": True}
        if block.signature is not None:
            part["thoughtSignature"] = block.signature
        return part


def _drop(message: Message, index: int, block_type: str, reason: str) -> None:
    """A block Gemini cannot carry: left out, with the one lossy-projection WARN (spec §7.3)."""
    drop_block(adapter=NAME, message=message, index=index, block_type=block_type, reason=reason)


def _order(item: tuple[int, dict[str, Any]]) -> int:
    return item[0]


def _signature_map(items: list[tuple[int, str]], message: Message) -> dict[int, str]:
    """Block index -> signature, kept only where the block still fits (a text or a call)."""
    content = message.content
    return {
        index: signature
        for index, signature in items
        if 0 <= index < len(content) and isinstance(content[index], TextBlock | ToolUseBlock)
    }


def _extra_at(extra: list[tuple[int, dict[str, Any]]], position: int) -> list[dict[str, Any]]:
    return [dict(part) for at, part in extra if at == position]


def _replay_args(raw: str | None, value: dict[str, Any], *, as_text: bool) -> Any:
    """The args to send back: the provider's own non-object arguments when we kept them (as
    the string it sent, or as the JSON value it sent)."""
    if raw is None:
        return value
    if as_text:
        return raw
    try:
        return _json.loads(raw)
    except ValueError:
        return raw


def _result_object(text: str, is_error: bool) -> dict[str, Any]:
    """Tool result text -> functionResponse.response (convention in the module docstring)."""
    if text.lstrip(" \t\n\r").startswith("{"):  # only such a text can be a JSON object
        try:
            obj = _json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            if ("error" in obj) == is_error:
                return obj
            return {"error": obj} if is_error else {"output": obj}
    return {"error": text} if is_error else {"output": text}


__all__ = ["declaration", "estimate_input_tokens", "write_request"]
