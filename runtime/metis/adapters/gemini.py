"""Google Gemini `generateContent` / `streamGenerateContent` (AI Studio, v1beta) <-> canonical.

Wire facts this module is built on (provider-wire-formats.md §3, google-genai 3.4 `types.py`):

- Roles are `user` and `model`; the system prompt is the top-level `systemInstruction`; tool
  results are `functionResponse` parts inside a `user` content, and a parallel batch must be
  ONE user content with as many responses as the model turn had calls.
- Calls usually carry no id. Canonical ids are minted for every call; a call's Gemini id (when
  Gemini gave one) is bound in the session's ToolIdMap and echoed back; calls without an id are
  paired with their responses by order and name. A foreign provider's id is never sent.
- `thoughtSignature` sits on a part (a thought, the first `functionCall` of a step, a text part,
  or a part whose text is empty) and must come back on the same part position. A signature on
  a thought stays on its ThinkingBlock; every other signature is kept in provider_raw:
  `part_signatures: [[block_index, signature], ...]`, and parts with no canonical block (an
  empty-text signature part, `executableCode`, ...) in `extra_parts: [[position, part], ...]`
  (re-inserted before block `position` on replay). Replay happens only for messages this
  adapter produced for this endpoint kind (`provider_raw.endpoint`).
- Block folding (one rule for whole and streamed responses, so both give the same message):
  parts of one kind (text, thought) extend the open block of that kind; a new block starts
  when the kind changes, at every `functionCall`, after a kept extra part, and when a second
  signature would land on an already signed block. A stream's text deltas therefore become
  one text block (replayed as one part carrying the block's signature).
- History starting with a model turn is sent as is, with a WARN: no user turn is invented.
- Tool results travel as `{"output": <text>}`, or `{"error": <text>}` when `is_error`; result
  text that is a JSON object is sent as that object (Gemini treats an object without
  `output`/`error` keys as the whole output; an object with an `error` key as error details),
  wrapped in `output`/`error` when sending it bare would flip its error meaning. Importing
  reverses this, so a recorded response object round-trips unchanged.
- `finishReason` arrives as a name or, with `enum-encoding=int`, as the proto number
  (generativelanguage v1beta numbering, which is NOT google-genai's declaration order).
  A call in the content makes the stop reason `tool_use` even though Gemini says `STOP`.
- Streams are SSE (`alt=sse`, data-only, no `[DONE]`) or one JSON array; the decoder sniffs
  the first non-blank character. Every chunk is a whole GenerateContentResponse: text parts
  are deltas, a call arrives whole, the last `usageMetadata` wins, `finishReason` ends it.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from metis_schema.v1 import (
    ContentBlock,
    ErrorEvent,
    ImageBlock,
    ImageSourceKind,
    Message,
    MessageCompleteEvent,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
)
from pydantic import ValidationError

from .. import _json
from ..assembly import (
    RequestContext,
    finish_assistant,
    import_context,
    imported_assistant,
    imported_message,
    parse_tool_arguments,
)
from ..errors import InvariantError, ProviderError, WireFormatError, retryable_status
from ..ids import ToolIdMap
from ..usage import TokenCounts, normalize_usage, usage_event
from ..validation import pydantic_problems
from ._framing import JSONArrayFramer, SSEFramer
from ._lossy import drop_block, import_drop
from ._shared import (
    image_base64,
    imported_tool,
    is_tool_use,
    own_raw,
    parse_data_url,
    resolve_import_model,
    text_block,
    thinking_block,
    tool_use_block,
)
from .base import Adapter, AdapterOptions, StreamDecoder, WireBody, WireImport

log = logging.getLogger("metis.adapters.gemini")

NAME = "gemini"
ENDPOINT_KIND = "generativelanguage"
"""The endpoint family this adapter speaks (AI Studio). Signatures recorded under another kind
(a Vertex or proxy adapter) are never replayed here, and ours never go there."""
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a missing thought signature on a replayed call."""
DEFAULT_IMPORT_MODEL = "gemini:gemini-2.5-flash"
"""Model assumed for an imported request body that names none (the model is in Gemini's URL)."""

_ROLES: dict[str, Role] = {"user": Role.user, "model": Role.assistant, "function": Role.user}
"""Wire role -> canonical role when importing (`function` is the pre-2024 role of responses)."""

_STOP: dict[str, StopReason] = {
    "STOP": StopReason.end_turn,
    "MAX_TOKENS": StopReason.max_tokens,
    "SAFETY": StopReason.content_filter,
    "RECITATION": StopReason.content_filter,
    "BLOCKLIST": StopReason.content_filter,
    "PROHIBITED_CONTENT": StopReason.content_filter,
    "SPII": StopReason.content_filter,
    "IMAGE_SAFETY": StopReason.content_filter,
    "IMAGE_PROHIBITED_CONTENT": StopReason.content_filter,
    "IMAGE_RECITATION": StopReason.content_filter,
    "MODEL_ARMOR": StopReason.content_filter,
}
"""finishReason -> canonical stop reason; every other value (MALFORMED_FUNCTION_CALL, OTHER,
LANGUAGE, UNEXPECTED_TOOL_CALL, ...) is `other`. A call in the content overrides all of them."""

_BLOCK_STOP: dict[str, StopReason] = {
    "SAFETY": StopReason.content_filter,
    "BLOCKLIST": StopReason.content_filter,
    "PROHIBITED_CONTENT": StopReason.content_filter,
    "IMAGE_SAFETY": StopReason.content_filter,
}
"""promptFeedback.blockReason (the prompt was refused, no candidate) -> canonical stop reason."""

_FINISH_BY_NUMBER: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
    6: "LANGUAGE",
    7: "BLOCKLIST",
    8: "PROHIBITED_CONTENT",
    9: "SPII",
    10: "MALFORMED_FUNCTION_CALL",
    11: "IMAGE_SAFETY",
    12: "UNEXPECTED_TOOL_CALL",
    13: "TOO_MANY_TOOL_CALLS",
    14: "IMAGE_PROHIBITED_CONTENT",
    15: "IMAGE_OTHER",
    16: "NO_IMAGE",
    17: "IMAGE_RECITATION",
    18: "MISSING_THOUGHT_SIGNATURE",
    19: "MALFORMED_RESPONSE",
}
"""google.ai.generativelanguage.v1beta Candidate.FinishReason proto numbers (what
`enum-encoding=int` sends). 0-12 are checked against the generated v1beta client (note
LANGUAGE = 6 and OTHER = 5: google-genai's enum declares them in the other order); 13-19 follow
the current proto. Unknown numbers become `FINISH_REASON_<n>` (stop reason `other`)."""

_BLOCK_BY_NUMBER: dict[int, str] = {
    0: "BLOCK_REASON_UNSPECIFIED",
    1: "SAFETY",
    2: "OTHER",
    3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT",
    5: "IMAGE_SAFETY",
}
"""PromptFeedback.BlockReason proto numbers (0-4 checked against the v1beta proto)."""

_TOOL_MODES: dict[str, str] = {"auto": "AUTO", "required": "ANY", "any": "ANY", "none": "NONE"}
"""Canonical tool_choice -> functionCallingConfig.mode; any other value names one tool (ANY +
allowedFunctionNames)."""

_RETRYABLE_STATUS = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"})

_MODEL_NAME = re.compile(r"^(?:models/)?(?P<name>[^/:]+)$")

_IMAGE_TOKENS = 258
"""Gemini bills an image up to 384x384 px as 258 tokens (larger ones tile at 258 each)."""
_CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 3


# --- small helpers --------------------------------------------------------------------------


def _field(obj: dict[str, Any], camel: str, snake: str) -> Any:
    """A field given in camelCase (REST) or snake_case (Vertex / SDK dumps); camelCase wins."""
    return obj[camel] if camel in obj else obj.get(snake)


def _dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireFormatError(f"expected a JSON object, got {type(value).__name__}", provider=NAME, path=path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    """A JSON array; a single object is read as a one-element array (lenient clients send one)."""
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise WireFormatError(f"expected a JSON array, got {type(value).__name__}", provider=NAME, path=path)
    return value


def _opt_str(value: Any, path: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise WireFormatError(f"expected a string, got {type(value).__name__}", provider=NAME, path=path)


def _enum_name(value: Any, table: dict[int, str], prefix: str, path: str) -> str | None:
    """A wire enum given as a name or as its proto number -> its name (None when unspecified)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise WireFormatError(
            f"enum value must be a string or an integer, got {value!r}", provider=NAME, path=path
        )
    name = table.get(value, f"{prefix}_{value}") if isinstance(value, int) else value
    return None if name.endswith("_UNSPECIFIED") else name


def _json_object(text: str) -> dict[str, Any] | None:
    """`text` parsed, when it is a JSON object; None otherwise."""
    try:
        value = _json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _args_text(args: Any) -> str:
    """A call's args as the JSON text the assembler parses (a string is passed through)."""
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def _error_fields(body: Any, status_code: int | None) -> tuple[str, str, int | None]:
    """(error type, provider message, HTTP code) of a Gemini error body in any form it arrives."""
    if isinstance(body, bytes | bytearray):
        body = bytes(body).decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            body = _json.loads(body)
        except ValueError:
            return (f"HTTP_{status_code}" if status_code else "UNKNOWN"), body.strip()[:2000], status_code
    if isinstance(body, list) and body:  # the JSON-array stream endpoint wraps errors in an array
        body = body[0]
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        text = json.dumps(body, ensure_ascii=False)[:2000] if body is not None else ""
        return (f"HTTP_{status_code}" if status_code else "UNKNOWN"), text, status_code
    code = error.get("code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    status = error.get("status")
    kind = status if isinstance(status, str) and status else (str(code) if code is not None else "UNKNOWN")
    message = error.get("message")
    return kind, message if isinstance(message, str) else json.dumps(error, ensure_ascii=False), code


# --- response parts -> canonical blocks ---------------------------------------------------


class _PartFolder:
    """Folds the parts of one model turn into canonical blocks plus replay data.

    The same folder reads a whole response, a stream of chunks and a recorded model content,
    so all three give the same blocks (see the module docstring for the folding rule). A
    stream decoder takes the blocks as stream events (a StreamAssembler folds them into
    the message); a whole response or recorded turn is folded `direct`ly: the same
    decisions, recorded as block data that `content()` turns into blocks, exactly what the
    assembler would build from the events (without building and replaying the events).
    """

    def __init__(self, context: RequestContext, *, direct: bool = False) -> None:
        self.context = context
        self.direct = direct
        self.kinds: list[str] = []
        self.signed: list[bool] = []
        self.part_signatures: list[list[Any]] = []
        self.extra_parts: list[list[Any]] = []
        self.calls: list[tuple[str, str, str | None]] = []  # (canonical id, name, gemini id)
        self.string_args: list[str] = []  # calls whose args came as a JSON string, not an object
        self.barrier = False  # an extra part sits after the open block: the next part starts anew
        # direct mode, per block: ["text", pieces], ["thinking", pieces, signature] or
        # ["tool_use", canonical id, name, args as sent]
        self.blocks: list[list[Any]] = []

    def replay_raw(self) -> dict[str, Any]:
        """The provider_raw entries that put signatures and extra parts back on replay."""
        raw: dict[str, Any] = {}
        if self.part_signatures:
            raw["part_signatures"] = [list(item) for item in self.part_signatures]
        if self.extra_parts:
            raw["extra_parts"] = [list(item) for item in self.extra_parts]
        if self.string_args:
            raw["string_args"] = list(self.string_args)
        return raw

    def content(self) -> tuple[list[ContentBlock], dict[str, str]]:
        """Direct mode: the blocks, and the arguments that did not parse (by canonical id).

        What StreamAssembler.content(final=True) gives for this folder's events: texts
        joined, a thought's last signature, call args parsed by `parse_tool_arguments`.
        Args sent as a JSON object are taken as they are: the event path would dump them
        to JSON text and parse that back into an equal object (a JSON round trip is the
        identity on parsed JSON), at a cost of several µs per call.
        """
        out: list[ContentBlock] = []
        unparsed: dict[str, str] = {}
        for block in self.blocks:
            kind = block[0]
            if kind == "text":
                out.append(text_block("".join(block[1])))
            elif kind == "thinking":
                out.append(
                    thinking_block({"type": "thinking", "text": "".join(block[1]), "signature": block[2]})
                )
            else:
                _, canonical, name, args = block
                if type(args) is dict:
                    value = args
                else:
                    value, bad = parse_tool_arguments(
                        _args_text(args), context=self.context, tool_id=canonical, name=name
                    )
                    if bad is not None:
                        unparsed[canonical] = bad
                out.append(tool_use_block(canonical, name, value))
        return out, unparsed

    def fold(self, part: Any, path: str) -> list[StreamEvent]:
        """One wire part -> the events it produces (none in direct mode)."""
        part = _dict(part, path)
        signature = _opt_str(
            _field(part, "thoughtSignature", "thought_signature"), path + ".thoughtSignature"
        )
        call = _field(part, "functionCall", "function_call")
        if call is not None:
            return self._call(_dict(call, path + ".functionCall"), signature, path + ".functionCall")
        text = _opt_str(part.get("text"), path + ".text")
        thought = part.get("thought")
        if thought is not None and not isinstance(thought, bool):
            raise WireFormatError("`thought` must be a boolean", provider=NAME, path=path + ".thought")
        if thought:
            return self._thought(text or "", signature)
        if text is not None or (
            signature is not None and set(part) <= {"thoughtSignature", "thought_signature"}
        ):
            return self._text(text or "", signature)
        if part:
            self._extra(part, path)
        return []

    def fold_all(self, parts: list[Any], where: str) -> list[StreamEvent]:
        """The parts of `<where>.parts` in order -> their events (none in direct mode).

        Speed: the usual parts (camelCase text, thought or functionCall parts with fields of
        the right types) are taken without the checked reads of `fold` and without building
        their path strings; any other part, or one with a wrong type (the error needs its
        path), goes through `fold`, which decides the same for the usual ones.
        """
        events: list[StreamEvent] = []
        for j, part in enumerate(parts):
            if type(part) is dict:
                signature = (
                    part["thoughtSignature"] if "thoughtSignature" in part else part.get("thought_signature")
                )
                if signature is None or type(signature) is str:
                    call = part.get("functionCall")
                    if type(call) is dict:
                        name = call.get("name")
                        provider_id = call.get("id")
                        if type(name) is str and name and (provider_id is None or type(provider_id) is str):
                            events.extend(self._add_call(call, name, provider_id or None, signature))
                            continue
                    elif "functionCall" not in part and "function_call" not in part:
                        text = part.get("text")
                        thought = part.get("thought")
                        if type(text) is str and (thought is None or type(thought) is bool):
                            if thought:
                                events.extend(self._thought(text, signature))
                            else:
                                events.extend(self._text(text, signature))
                            continue
            events.extend(self.fold(part, f"{where}.parts[{j}]"))
        return events

    def _open(self, kind: str, signature: str | None) -> int | None:
        """Index of the open block this part extends, or None when it starts a new one."""
        if (
            self.kinds
            and not self.barrier
            and self.kinds[-1] == kind
            and not (self.signed[-1] and signature is not None)
        ):
            return len(self.kinds) - 1
        return None

    def _new(self, kind: str) -> int:
        self.barrier = False
        self.kinds.append(kind)
        self.signed.append(False)
        return len(self.kinds) - 1

    def _sign(self, index: int, signature: str, *, on_block: bool) -> None:
        self.signed[index] = True
        if not on_block:
            self.part_signatures.append([index, signature])

    def _text(self, text: str, signature: str | None) -> list[StreamEvent]:
        if text == "":  # a signature-only part (often the last of a stream): replayed as it came
            if signature is not None:
                self._keep({"text": "", "thoughtSignature": signature})
            return []
        index = self._open("text", signature)
        if index is None:
            index = self._new("text")
            if self.direct:
                self.blocks.append(["text", []])
        if signature is not None:
            self._sign(index, signature, on_block=False)
        if self.direct:
            self.blocks[index][1].append(text)
            return []
        return [TextDeltaEvent(type="text_delta", index=index, text=text)]

    def _thought(self, text: str, signature: str | None) -> list[StreamEvent]:
        index = self._open("thinking", signature)
        if index is None:
            if text == "" and signature is None:
                return []
            index = self._new("thinking")
            if self.direct:
                self.blocks.append(["thinking", [], None])
        if signature is not None:
            self._sign(index, signature, on_block=True)
        if text == "" and signature is None:
            return []
        if self.direct:  # as the assembler applies a thinking delta: text appended, signature set
            block = self.blocks[index]
            if text:
                block[1].append(text)
            if signature is not None:
                block[2] = signature
            return []
        return [
            ThinkingDeltaEvent(type="thinking_delta", index=index, text=text or None, signature=signature)
        ]

    def _call(self, call: dict[str, Any], signature: str | None, path: str) -> list[StreamEvent]:
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise WireFormatError("functionCall has no name", provider=NAME, path=path + ".name")
        provider_id = _opt_str(call.get("id"), path + ".id") or None
        return self._add_call(call, name, provider_id, signature)

    def _add_call(
        self, call: dict[str, Any], name: str, provider_id: str | None, signature: str | None
    ) -> list[StreamEvent]:
        canonical = self.context.tool_ids.register_incoming(NAME, provider_id)
        index = self._new("tool_use")
        self.calls.append((canonical, name, provider_id))
        args = call.get("args")
        if isinstance(args, str):
            self.string_args.append(canonical)
        if signature is not None:
            self._sign(index, signature, on_block=False)
        if self.direct:
            self.blocks.append(["tool_use", canonical, name, args])
            return []
        return [
            ToolUseStartEvent(
                type="tool_use_start", index=index, id=canonical, name=name, provider_id=provider_id
            ),
            ToolUseInputDeltaEvent(type="tool_use_input_delta", index=index, partial_json=_args_text(args)),
            ToolUseEndEvent(type="tool_use_end", index=index),
        ]

    def _keep(self, part: dict[str, Any]) -> None:
        """Keep a part for replay before the next block; it also closes the open block, so
        text on both sides of it never merges."""
        self.extra_parts.append([len(self.kinds), part])
        self.barrier = True

    def _extra(self, part: dict[str, Any], path: str) -> None:
        """A part with no canonical block (executableCode, generated media, ...): kept for replay."""
        self._keep(part)
        log.warning(
            "gemini part %s (%s) has no canonical block; kept in provider_raw for replay to gemini",
            path,
            ", ".join(sorted(part)),
            extra={"session_id": self.context.session_id, "adapter": NAME, "path": path},
        )


class _Response:
    """The state of one response, whole or streamed: folded parts, finish, usage, ids."""

    def __init__(self, context: RequestContext, *, direct: bool = False) -> None:
        self.folder = _PartFolder(context, direct=direct)
        self.response_id: str | None = None
        self.model_version: str | None = None
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.block_reason: str | None = None
        self.counts: TokenCounts | None = None
        self.completed = False
        self.failed = False

    def consume(self, body: Any, path: str) -> list[StreamEvent]:
        """One GenerateContentResponse (a whole body or a stream chunk) -> events."""
        if self.failed:
            return []
        body = _dict(body, path or "(root)")
        if "error" in body:
            return self._error(body)
        counts = self.counts
        events = self.read(body, path)
        if self.counts is not counts:
            assert self.counts is not None
            events.append(usage_event(self.counts))
        if (self.finish_reason or self.block_reason) and not self.completed:
            events.extend(self.complete())
        return events

    def read(self, body: dict[str, Any], path: str) -> list[StreamEvent]:
        """The fields of one GenerateContentResponse, checked and recorded; the part events
        (none for a direct folder). `counts` is replaced only when the usage changed.

        Speed (this runs for every response and stream chunk): a field of the expected type
        is taken inline, `_field`'s rule (camelCase wins) spelled out; any other value goes
        through the checked reader, which returns the same or raises with the field's path.
        """
        value = body["responseId"] if "responseId" in body else body.get("response_id")
        if type(value) is not str:
            value = _opt_str(value, path + "responseId")
        self.response_id = value or self.response_id
        value = body["modelVersion"] if "modelVersion" in body else body.get("model_version")
        if type(value) is not str:
            value = _opt_str(value, path + "modelVersion")
        self.model_version = value or self.model_version
        events = self._candidate(body, path)
        if "promptFeedback" in body or "prompt_feedback" in body:
            self._prompt_feedback(body, path)
        usage = body["usageMetadata"] if "usageMetadata" in body else body.get("usage_metadata")
        if usage is not None:
            if type(usage) is not dict:
                usage = _dict(usage, path + "usageMetadata")
            counts = normalize_usage(NAME, usage)
            if counts != self.counts:
                self.counts = counts
        return events

    def _candidate(self, body: dict[str, Any], path: str) -> list[StreamEvent]:
        """The first candidate's parts, finish reason and message (inline reads as in `read`)."""
        candidates = body.get("candidates")
        if candidates is None:
            return []
        if type(candidates) is not list:
            candidates = _list(candidates, path + "candidates")
        if not candidates:
            return []
        where = path + "candidates[0]"
        candidate = candidates[0]
        if type(candidate) is not dict:
            candidate = _dict(candidate, where)
        events: list[StreamEvent] = []
        content = candidate.get("content")
        if content is not None:
            if type(content) is not dict:
                content = _dict(content, where + ".content")
            parts = content.get("parts") or []
            if type(parts) is not list:
                parts = _list(parts, where + ".content.parts")
            events = self.folder.fold_all(parts, where + ".content")
        reason = candidate["finishReason"] if "finishReason" in candidate else candidate.get("finish_reason")
        if type(reason) is str and not reason.endswith("_UNSPECIFIED"):
            self.finish_reason = reason or self.finish_reason
        else:
            name = _enum_name(reason, _FINISH_BY_NUMBER, "FINISH_REASON", where + ".finishReason")
            self.finish_reason = name or self.finish_reason
        message = (
            candidate["finishMessage"] if "finishMessage" in candidate else candidate.get("finish_message")
        )
        if type(message) is not str:
            message = _opt_str(message, where + ".finishMessage")
        self.finish_message = message or self.finish_message
        return events

    def _prompt_feedback(self, body: dict[str, Any], path: str) -> None:
        feedback = _field(body, "promptFeedback", "prompt_feedback")
        if feedback is None:
            return
        reason = _field(_dict(feedback, path + "promptFeedback"), "blockReason", "block_reason")
        name = _enum_name(reason, _BLOCK_BY_NUMBER, "BLOCK_REASON", path + "promptFeedback.blockReason")
        self.block_reason = name or self.block_reason

    def _error(self, body: dict[str, Any]) -> list[StreamEvent]:
        self.failed = True
        kind, message, code = _error_fields(body, None)
        retryable = kind in _RETRYABLE_STATUS or retryable_status(code)
        return [ErrorEvent(type="error", code=kind, message=message, retryable=retryable, provider=NAME)]

    def stop_reason(self) -> StopReason:
        """Derived from content first: any call is `tool_use`, whatever finishReason says."""
        if self.folder.calls:
            return StopReason.tool_use
        if self.finish_reason is not None:
            return _STOP.get(self.finish_reason, StopReason.other)
        if self.block_reason is not None:
            return _BLOCK_STOP.get(self.block_reason, StopReason.other)
        return StopReason.other

    def empty_error(self) -> tuple[str, str]:
        """(code, message) of the error that ends an answer with no content."""
        reason = self.finish_reason or self.block_reason
        detail = (
            f"finishReason {self.finish_reason}" if self.finish_reason else f"blockReason {self.block_reason}"
        )
        message = self.finish_message or f"Gemini returned no content ({detail if reason else 'no reason'})"
        return reason or "EMPTY_RESPONSE", message

    def complete(self) -> list[StreamEvent]:
        """The closing events. An empty answer cannot be a COMPLETE message (spec §5.1.1), so it
        also gets an error event: the message ends as ERROR, carrying the provider's reason."""
        self.completed = True
        events: list[StreamEvent] = []
        if not self.folder.kinds:
            code, message = self.empty_error()
            events.append(ErrorEvent(type="error", code=code, message=message, provider=NAME))
        events.append(
            MessageCompleteEvent(
                type="message_complete",
                stop_reason=self.stop_reason(),
                provider_stop_reason=self.finish_reason or self.block_reason,
                response_id=self.response_id,
                provider_model=self.model_version,
            )
        )
        return events

    def provider_raw(self) -> dict[str, Any]:
        """What a later replay to Gemini needs, plus the provider's own finish data."""
        raw: dict[str, Any] = {"adapter": NAME, "endpoint": ENDPOINT_KIND}
        if self.response_id is not None:
            raw["responseId"] = self.response_id
        if self.model_version is not None:
            raw["modelVersion"] = self.model_version
        if self.finish_reason is not None:
            raw["finishReason"] = self.finish_reason
        if self.finish_message is not None:
            raw["finishMessage"] = self.finish_message
        if self.block_reason is not None:
            raw["blockReason"] = self.block_reason
        raw.update(self.folder.replay_raw())
        return raw


class GeminiStreamDecoder(StreamDecoder):
    """SSE (`alt=sse`) or JSON-array stream -> canonical events; the format is sniffed from the
    first non-blank character (`[` means a JSON array)."""

    def __init__(self, context: RequestContext) -> None:
        self._response = _Response(context)
        self._framer: SSEFramer | JSONArrayFramer | None = None
        self._pending: list[bytes | str] = []
        self._chunks = 0

    def feed(self, data: bytes | str) -> list[StreamEvent]:
        if not data:
            return []
        if self._framer is None:
            self._pending.append(data)
            first = _first_char(self._pending)
            if first is None:
                return []
            self._framer = JSONArrayFramer() if first == "[" else SSEFramer()
            pieces, self._pending = self._pending, []
            return self._handle([text for piece in pieces for text in self._frame(piece)])
        return self._handle(self._frame(data))

    def close(self) -> list[StreamEvent]:
        if self._framer is None:
            raise WireFormatError("the stream body is empty", provider=NAME, path="stream")
        # The framers hand over complete chunks only: a cut stream just ends (CANCELLED).
        texts = (
            [event.data for event in self._framer.close()]
            if isinstance(self._framer, SSEFramer)
            else self._framer.close()
        )
        return self._handle(texts)

    def provider_raw(self) -> dict[str, Any] | None:
        return self._response.provider_raw()

    def _frame(self, data: bytes | str) -> list[str]:
        if isinstance(self._framer, SSEFramer):
            return [event.data for event in self._framer.feed(data)]
        assert self._framer is not None
        return self._framer.feed(data)

    def _handle(self, texts: list[str]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for piece in texts:
            text = piece.strip()
            if not text or text == "[DONE]":
                continue
            path = f"stream[{self._chunks}]"
            try:
                chunk = _json.loads(text)
            except _json.JSONDecodeError as exc:
                raise WireFormatError(
                    f"stream chunk is not JSON: {exc}", provider=NAME, path=path, raw=text[:500]
                ) from exc
            self._chunks += 1
            events.extend(self._response.consume(chunk, path + "."))
        return events


def _first_char(pieces: list[bytes | str]) -> str | None:
    """The first non-blank character of the body so far (None while it is all blank)."""
    for piece in pieces:
        text = piece if isinstance(piece, str) else piece.decode("latin-1")
        stripped = text.lstrip(" \t\r\n\ufeff")
        if stripped:
            return stripped[0]
    return None


# --- the adapter ----------------------------------------------------------------------------


class GeminiAdapter(Adapter):
    """Google Gemini through AI Studio's generateContent REST API (see the module docstring)."""

    name: ClassVar[str] = NAME
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"
    api_key_env: ClassVar[str | None] = "GEMINI_API_KEY"
    fallback_api_key_envs: ClassVar[tuple[str, ...]] = ("GOOGLE_API_KEY",)
    """Google's SDK also reads GOOGLE_API_KEY; either holds an AI Studio key."""

    # --- transport ------------------------------------------------------------------------

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` (SSE)."""
        model = wire_model.removeprefix("models/")
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{base_url.rstrip('/')}/models/{model}:{method}"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """AI Studio keys travel in `x-goog-api-key` (never in the URL, where logs keep them)."""
        return {"x-goog-api-key": api_key} if api_key else {}

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        """`{"error": {code, message, status}}` (also wrapped in an array, or a plain text page)."""
        kind, message, code = _error_fields(body, status_code)
        status = status_code if status_code is not None else code
        retryable = kind in _RETRYABLE_STATUS or retryable_status(status)
        return ProviderError(
            message, provider=NAME, error_type=kind, status_code=status, retryable=retryable, body=body
        )

    # --- canonical -> wire ----------------------------------------------------------------

    def to_wire(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> a generateContent body (camelCase, as the REST API documents)."""
        writer = _Writer(self, messages, options)
        body: WireBody = {}
        contents = writer.contents()
        if writer.system_parts:
            body["systemInstruction"] = {"parts": writer.system_parts}
        body["contents"] = contents
        if tools:
            body["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in tools]}]
        tool_config = _tool_config(options.tool_choice)
        if tool_config is not None:
            body["toolConfig"] = tool_config
        generation = _generation_config(options)
        if generation:
            body["generationConfig"] = generation
        _fill_missing_signatures(contents, options.session_id, exact=writer.exact, start=writer.current_turn)
        if contents and contents[0]["role"] == "model":
            log.warning(
                "gemini history starts with a model turn; sent as is (no user turn invented)",
                extra={
                    "session_id": options.session_id,
                    "adapter": NAME,
                    "reason": "history starts with model",
                },
            )
        body.update(options.extra)
        return body

    # --- wire -> canonical ----------------------------------------------------------------

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """A whole response -> one canonical message. It is read by the same code as a stream
        chunk (`_Response.read`, `_PartFolder`), with the folder in direct mode: the blocks,
        status, stop reason, usage and provider_raw are those a StreamAssembler builds from
        the stream's events (see `assemble_stream`), so streamed-and-assembled equals this,
        field for field, without building, replaying and re-validating the events."""
        raw: Any = body  # callers hand over whatever JSON arrived, not always an object
        wrapped = raw[0] if isinstance(raw, list) and len(raw) == 1 else raw
        if isinstance(wrapped, dict) and "error" in wrapped:
            raise self.parse_error(body)
        response = _Response(context, direct=True)
        response.read(_dict(raw, "(root)"), "")
        content, unparsed = response.folder.content()
        provider_raw = response.provider_raw()
        if unparsed:
            provider_raw["unparsed_arguments"] = unparsed
        counts = response.counts
        status = MessageStatus.complete
        if not content:  # the assembler's ERROR for an empty answer (see `_Response.complete`)
            code, message = response.empty_error()
            provider_raw["error"] = {"code": code, "message": message}
            status = MessageStatus.error
        elif counts is None:
            counts = TokenCounts()  # no usage reported: zero, priced as such
        return finish_assistant(
            context,
            provider=NAME,
            content=content,
            counts=counts,
            stop_reason=response.stop_reason(),
            provider_raw=provider_raw,
            status=status,
        )

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        return GeminiStreamDecoder(context)

    def from_wire_request(
        self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap, model: str | None = None
    ) -> WireImport:
        """A recorded request body (camelCase or snake_case) -> canonical messages, tools, options.

        The model is not in a Gemini body (it is in the URL): pass `model`, else a `model` key
        in the body is used, else DEFAULT_IMPORT_MODEL.
        """
        return _Reader(session_id, tool_ids, model).read(_dict(body, "(root)"))

    # --- estimate -------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
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
            chars += len(json.dumps(_declaration(tool), ensure_ascii=False))
        return (
            math.ceil(chars / _CHARS_PER_TOKEN) + images * _IMAGE_TOKENS + _MESSAGE_OVERHEAD * len(messages)
        )


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


def _declaration(tool: ToolDefinition) -> dict[str, Any]:
    """A functionDeclaration. A schema with no properties is left out: Gemini rejects an OBJECT
    parameters schema whose `properties` is empty."""
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    schema = tool.input_schema
    if schema.get("properties") or schema.get("type") not in ("object", "OBJECT", None):
        declaration["parameters"] = schema
    return declaration


def _tool_config(choice: str | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    mode = _TOOL_MODES.get(choice)
    if mode is not None:
        return {"functionCallingConfig": {"mode": mode}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def _generation_config(options: AdapterOptions) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for key, value in (
        ("maxOutputTokens", options.max_tokens),
        ("temperature", options.temperature),
        ("topP", options.top_p),
        ("stopSequences", options.stop),
    ):
        if value is not None:
            config[key] = value
    if options.thinking_budget is not None:
        config["thinkingConfig"] = {
            "thinkingBudget": options.thinking_budget,
            "includeThoughts": options.thinking_budget != 0,
        }
    return config


def _fill_missing_signatures(
    contents: list[dict[str, Any]], session_id: str, *, exact: set[int], start: int
) -> None:
    """Google's documented fallback for history without signatures (another provider's turns,
    or Gemini turns whose signatures cannot be replayed here): Gemini 3 validates only the
    current turn (after the last plain user message), on the first functionCall of each model
    step there, so exactly those parts get `skip_thought_signature_validator`. Turns replayed
    exactly (`exact`: indexes into contents) are left as Gemini sent them. One WARN per request.
    `start`: where the current turn begins (the writer tracks it while building `contents`)."""
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


def _batch_parts(batch: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A batch of functionResponse parts in the order of their calls (stable)."""
    if len(batch) == 1:
        return [batch[0][1]]
    return [part for _, part in sorted(batch, key=lambda b: b[0])]


class _Writer:
    """Builds `contents` (and the system parts) from canonical messages for one request.

    Speed: one walk over the history. Blocks are dispatched on `type(block) is ...` (see
    `_is_tool_use`): the usual messages (one text block, a foreign or plain model turn of
    text and calls, a tool result of one text block) take short paths, every other block
    the general one, which behaves the same. The call map (canonical id -> position in the
    history and name, the first call with an id wins) is filled during the walk, in history
    order, not in a pass of its own: a tool result normally follows its call, and a result
    whose call comes later triggers one full scan (`_call`), which yields the same map.
    """

    def __init__(self, adapter: GeminiAdapter, messages: Sequence[Message], options: AdapterOptions) -> None:
        self.messages = messages
        self.options = options
        self.caps = adapter.capabilities(options.model)
        self.system_parts: list[dict[str, Any]] = []
        self.exact: set[int] = set()  # contents that replay a Gemini turn of this endpoint exactly
        self.current_turn = 0  # index in contents after the last user message (see _fill_missing_signatures)
        self.gemini_ids = options.tool_ids.issued_by(NAME)  # canonical ids Gemini itself issued
        self.calls: dict[str, tuple[int, str]] = {}  # canonical id -> (position in history, name)
        self._scanned = False

    def _register(self, block: ToolUseBlock) -> None:
        """A call met in the walk (in history order, so positions are those of a full scan)."""
        if block.id not in self.calls:
            self.calls[block.id] = (len(self.calls), block.name)

    def _call(self, tool_use_id: str) -> tuple[int, str] | None:
        """The call a result answers; a call not walked yet is found by one full scan."""
        call = self.calls.get(tool_use_id)
        if call is None and not self._scanned:
            self._scanned = True
            for message in self.messages:
                for block in message.content:
                    if is_tool_use(block):
                        self._register(block)
            call = self.calls.get(tool_use_id)
        return call

    def contents(self) -> list[dict[str, Any]]:
        """The `contents` array (and `system_parts`, `exact`, `current_turn` on the side).

        Speed: the usual messages are written inline here, with no call per message; each
        inline branch gives exactly what the general method gives, and that method takes
        every other case: a user message of one text block (`_user_parts`), a tool message
        of one result of one text block answering a call already walked, with no Gemini id
        (`_tool_message`), and a model turn with no provider_raw at all (`_model_parts`).
        """
        contents: list[dict[str, Any]] = []
        append = contents.append
        batch: list[tuple[int, dict[str, Any]]] = []
        calls = self.calls
        gemini_ids = self.gemini_ids
        current_turn = 0
        tool, user, system = Role.tool, Role.user, Role.system
        for i, message in enumerate(self.messages):
            role = message.role
            content = message.content
            if role == tool:
                if len(content) == 1 and type(result := content[0]) is ToolResultBlock:
                    inner = result.content
                    call = calls.get(call_id := result.tool_use_id)
                    if (
                        call is not None
                        and len(inner) == 1
                        and type(output := inner[0]) is TextBlock
                        and call_id not in gemini_ids
                    ):
                        response = {"name": call[1], "response": _result_object(output.text, result.is_error)}
                        batch.append((call[0], {"functionResponse": response}))
                        continue
                self._tool_message(message, i, batch)
                continue
            if batch:
                append({"role": "user", "parts": _batch_parts(batch)})
                batch = []
            parts: list[dict[str, Any]]
            if role == user:
                if len(content) == 1 and type(text_block := content[0]) is TextBlock:
                    parts = [{"text": text_block.text}] if text_block.text else []
                else:
                    parts = self._user_parts(message)
                if parts:
                    append({"role": "user", "parts": parts})
                    current_turn = len(contents)
            elif role == system:
                self._system(message)
            elif message.metadata.provider_raw is None:  # a model turn with nothing to replay
                parts = []
                for index, block in enumerate(content):
                    if type(block) is TextBlock:
                        if block.text:
                            parts.append({"text": block.text})
                    elif type(block) is ToolUseBlock and (call_id := block.id) not in gemini_ids:
                        # `_function_call` for a call with no Gemini id and no replay data
                        name = block.name
                        if call_id not in calls:
                            calls[call_id] = (len(calls), name)
                        parts.append({"functionCall": {"name": name, "args": block.input}})
                    elif (part := self._model_part(block, message, index, own=False)) is not None:
                        parts.append(part)
                if parts:
                    append({"role": "model", "parts": parts})
            else:
                parts, own = self._model_parts(message)
                if parts:
                    if own:
                        self.exact.add(len(contents))
                    append({"role": "model", "parts": parts})
        if batch:
            append({"role": "user", "parts": _batch_parts(batch)})
        self.current_turn = current_turn
        return contents

    # system, user and tool messages

    def _system(self, message: Message) -> None:
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text:
                    self.system_parts.append({"text": block.text})
            elif is_tool_use(block):  # not valid canonical; still part of the history's calls
                self._register(block)

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
                if is_tool_use(block):
                    self._register(block)
                drop_block(
                    adapter=NAME,
                    message=message,
                    index=index,
                    block_type=block.type,
                    reason="not allowed in a user message",
                )
        return parts

    def _image(self, block: ImageBlock, message: Message, index: int) -> dict[str, Any] | None:
        """inlineData for base64 / file_ref / data: URLs, fileData for other URLs."""
        accepted = self.caps.accepted_image_media_types
        if not self.caps.supports_images or (accepted and block.media_type not in accepted):
            drop_block(
                adapter=NAME,
                message=message,
                index=index,
                block_type="image",
                reason=f"{self.options.model} does not accept {block.media_type} images",
            )
            return None
        if block.source.kind == ImageSourceKind.url:
            parsed = parse_data_url(block.source.data)
            if parsed is None:
                return {"fileData": {"mimeType": block.media_type, "fileUri": block.source.data}}
            return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
        return {"inlineData": {"mimeType": block.media_type, "data": image_base64(block, self.options)}}

    def _tool_message(self, message: Message, position: int, batch: list[tuple[int, dict[str, Any]]]) -> None:
        """Adds the message's functionResponse parts to `batch`, keyed by their call's position."""
        for index, block in enumerate(message.content):
            if type(block) is not ToolResultBlock and not isinstance(block, ToolResultBlock):
                if is_tool_use(block):
                    self._register(block)
                drop_block(
                    adapter=NAME,
                    message=message,
                    index=index,
                    block_type=block.type,
                    reason="a tool message carries only tool_result blocks",
                )
                continue
            call = self._call(block.tool_use_id)
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
        inner = block.content
        first = inner[0] if len(inner) == 1 else None
        if type(first) is TextBlock:  # the usual result: one text block, no media
            text, simple = first.text, True
        else:
            text, simple = "\n".join(b.text for b in inner if isinstance(b, TextBlock)), False
        response: dict[str, Any] = {}
        if block.tool_use_id in self.gemini_ids:
            response["id"] = self.options.tool_ids.outgoing(block.tool_use_id, NAME)
        response["name"] = name
        response["response"] = _result_object(text, is_error=block.is_error)
        if simple:
            return response
        media = []
        for inner_block in inner:
            if isinstance(inner_block, ImageBlock):
                part = self._image(inner_block, message, index)
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
        signatures = _signature_map(raw, message) if own else {}
        extra = raw.get("extra_parts", []) if own else []
        unparsed = raw.get("unparsed_arguments", {}) if own else {}
        as_text = set(raw.get("string_args", [])) if own else set()
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

    def _function_call(self, block: ToolUseBlock, unparsed: Any, *, as_text: bool) -> dict[str, Any]:
        self._register(block)
        call: dict[str, Any] = {}
        if block.id in self.gemini_ids:
            call["id"] = self.options.tool_ids.outgoing(block.id, NAME)
        call["name"] = block.name
        call["args"] = _replay_args(unparsed, block.input, as_text=as_text)
        return {"functionCall": call}

    def _model_part(
        self,
        block: ContentBlock,
        message: Message,
        index: int,
        *,
        own: bool,
        unparsed: dict[str, Any] | None = None,
        as_text: set[str] | None = None,
    ) -> dict[str, Any] | None:
        """One block of an assistant message (`unparsed`, `as_text`: replay data, when own)."""
        if isinstance(block, TextBlock):
            return {"text": block.text} if block.text else None
        if isinstance(block, ToolUseBlock):
            return self._function_call(
                block,
                None if unparsed is None else unparsed.get(block.id),
                as_text=as_text is not None and block.id in as_text,
            )
        if isinstance(block, ThinkingBlock):
            return self._thinking(block, message, index, own=own)
        reason = (
            "gemini has no redacted thinking; the blob is another provider's"
            if isinstance(block, RedactedThinkingBlock)
            else "not allowed in an assistant message"
        )
        drop_block(adapter=NAME, message=message, index=index, block_type=block.type, reason=reason)
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
            drop_block(adapter=NAME, message=message, index=index, block_type="thinking", reason=reason)
            return None
        if not self.caps.supports_thinking:
            drop_block(
                adapter=NAME,
                message=message,
                index=index,
                block_type="thinking",
                reason=f"{self.options.model} does not support thinking",
            )
            return None
        part: dict[str, Any] = {"text": block.text, "thought": True}
        if block.signature is not None:
            part["thoughtSignature"] = block.signature
        return part


def _signature_map(raw: dict[str, Any], message: Message) -> dict[int, str]:
    """Block index -> signature from provider_raw, kept only where the block still fits."""
    out: dict[int, str] = {}
    for item in raw.get("part_signatures", []):
        if not (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], int)
            and isinstance(item[1], str)
        ):
            continue
        index, signature = item
        if 0 <= index < len(message.content) and isinstance(message.content[index], TextBlock | ToolUseBlock):
            out[index] = signature
    return out


def _extra_at(extra: list[Any], position: int) -> list[dict[str, Any]]:
    return [
        dict(item[1])
        for item in extra
        if isinstance(item, list) and len(item) == 2 and item[0] == position and isinstance(item[1], dict)
    ]


def _replay_args(raw: Any, value: dict[str, Any], *, as_text: bool) -> Any:
    """The args to send back: the provider's own non-object arguments when we kept them (as
    the string it sent, or as the JSON value it sent)."""
    if not isinstance(raw, str):
        return value
    if as_text:
        return raw
    try:
        return _json.loads(raw)
    except ValueError:
        return raw


def _result_object(text: str, is_error: bool) -> dict[str, Any]:
    """Tool result text -> functionResponse.response (convention in the module docstring)."""
    # Only a text that starts with "{" after JSON whitespace can be an object: checking that
    # first spares plain-text results a failing json.loads (it raises: ~2 µs each).
    if text.startswith("{") or text.lstrip(" \t\n\r").startswith("{"):
        obj = _json_object(text)
        if obj is not None:
            if ("error" in obj) == is_error:
                return obj
            return {"error": obj} if is_error else {"output": obj}
    return {"error": text} if is_error else {"output": text}


def _result_content(response: dict[str, Any]) -> tuple[str, bool]:
    """functionResponse.response -> (result text, is_error): the inverse of `_result_object`."""
    is_error = "error" in response
    key = "error" if is_error else "output"
    if set(response) == {key} and isinstance(response[key], str):
        return response[key], is_error
    return json.dumps(response, ensure_ascii=False), is_error


# --- request import -------------------------------------------------------------------------


class _Reader:
    """Reads one recorded request body into canonical form (see `from_wire_request`)."""

    def __init__(self, session_id: str, tool_ids: ToolIdMap, model: str | None) -> None:
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.model = model
        self.context: RequestContext  # set by `read`, once it knows the model
        self.messages: list[Message] = []
        self.unmapped: dict[str, Any] = {}
        self.dropped: list[dict[str, Any]] = []
        self.pending: list[tuple[str, str, str | None]] = []  # calls of the last model turn
        self.pending_at = -1

    def read(self, body: dict[str, Any]) -> WireImport:
        named = self.model or _import_model(body.get("model")) or DEFAULT_IMPORT_MODEL
        model = resolve_import_model(named, NAME)
        self.context = import_context(
            provider=NAME, session_id=self.session_id, model=model, tool_ids=self.tool_ids
        )
        consumed = {
            "model",
            "contents",
            "systemInstruction",
            "system_instruction",
            "tools",
            "toolConfig",
            "tool_config",
            "generationConfig",
            "generation_config",
        }
        system = _field(body, "systemInstruction", "system_instruction")
        if system is not None:
            self._system(system)
        contents = body.get("contents")
        if contents is None:
            raise WireFormatError("request has no contents", provider=NAME, path="contents")
        for i, content in enumerate(_list(contents, "contents")):
            self._content(_dict(content, f"contents[{i}]"), i)
        options = AdapterOptions(model=model, session_id=self.session_id, tool_ids=self.tool_ids)
        tools = self._tools(body.get("tools"))
        options.tool_choice = self._tool_choice(_field(body, "toolConfig", "tool_config"))
        self._generation(_field(body, "generationConfig", "generation_config"), options)
        for key, value in body.items():
            if key not in consumed:
                self.unmapped[key] = value
        return WireImport(
            messages=self.messages, tools=tools, options=options, unmapped=self.unmapped, dropped=self.dropped
        )

    # messages

    def _add(self, role: Role, content: list[ContentBlock], path: str, **metadata: Any) -> None:
        self.messages.append(
            imported_message(
                self.session_id,
                role,
                content,
                provider=NAME,
                path=path,
                created_at=datetime.now(UTC),
                metadata=metadata,
            )
        )

    def _system(self, system: Any) -> None:
        if isinstance(system, str):
            texts = [system]
        else:
            parts = _dict(system, "systemInstruction").get("parts") or []
            texts = []
            for j, part in enumerate(_list(parts, "systemInstruction.parts")):
                text = _opt_str(
                    _dict(part, f"systemInstruction.parts[{j}]").get("text"),
                    f"systemInstruction.parts[{j}].text",
                )
                if text is None:
                    self._drop(
                        part, f"systemInstruction.parts[{j}]", "a system instruction carries text only"
                    )
                elif text:
                    texts.append(text)
        self._add(Role.system, [TextBlock(type="text", text=t) for t in texts], "systemInstruction")

    def _content(self, content: dict[str, Any], i: int) -> None:
        path = f"contents[{i}]"
        role_name = content.get("role") or "user"
        role = _ROLES.get(role_name) if isinstance(role_name, str) else None
        if role is None:
            raise WireFormatError(
                f"unknown role {role_name!r} (expected user or model)", provider=NAME, path=path + ".role"
            )
        parts = _list(content.get("parts") or [], path + ".parts")
        if role == Role.assistant:
            self._model(parts, path, i)
        else:
            self._user(parts, path, i)

    def _model(self, parts: list[Any], path: str, i: int) -> None:
        folder = _PartFolder(self.context, direct=True)
        folder.fold_all(parts, path)
        content, unparsed = folder.content()
        self.pending, self.pending_at = list(folder.calls), i
        if not content:
            self._drop({"role": "model", "parts": parts}, path, "a model turn with no canonical block")
            return
        raw: dict[str, Any] = {"adapter": NAME, "endpoint": ENDPOINT_KIND, "imported": True}
        raw.update(folder.replay_raw())
        if unparsed:
            raw["unparsed_arguments"] = unparsed
        self.messages.append(
            imported_assistant(self.context, provider=NAME, content=content, provider_raw=raw)
        )

    def _user(self, parts: list[Any], path: str, i: int) -> None:
        blocks: list[ContentBlock] = []
        responses: list[tuple[int, dict[str, Any]]] = []
        for j, item in enumerate(parts):
            where = f"{path}.parts[{j}]"
            part = _dict(item, where)
            response = _field(part, "functionResponse", "function_response")
            if response is not None:
                if blocks:
                    self._add(Role.user, blocks, path)
                    blocks = []
                responses.append((j, _dict(response, where + ".functionResponse")))
                continue
            if responses:
                self._tool_messages(responses, path, i)
                responses = []
            block = self._user_block(part, where)
            if block is not None:
                blocks.append(block)
        if responses:
            self._tool_messages(responses, path, i)
        if blocks:
            self._add(Role.user, blocks, path)
        self.pending = []  # calls not answered by this turn stay unanswered

    def _user_block(self, part: dict[str, Any], where: str) -> ContentBlock | None:
        if _field(part, "functionCall", "function_call") is not None:
            raise WireFormatError("functionCall in a user turn", provider=NAME, path=where + ".functionCall")
        text = _opt_str(part.get("text"), where + ".text")
        if text is not None and not part.get("thought"):
            return TextBlock(type="text", text=text) if text else None
        inline = _field(part, "inlineData", "inline_data")
        if inline is not None:
            inline = _dict(inline, where + ".inlineData")
            return self._image(
                _field(inline, "mimeType", "mime_type"),
                inline.get("data"),
                ImageSourceKind.base64,
                part,
                where,
            )
        file_data = _field(part, "fileData", "file_data")
        if file_data is not None:
            file_data = _dict(file_data, where + ".fileData")
            return self._image(
                _field(file_data, "mimeType", "mime_type"),
                _field(file_data, "fileUri", "file_uri"),
                ImageSourceKind.url,
                part,
                where,
            )
        if part:
            self._drop(part, where, "no canonical block for this part")
        return None

    def _image(
        self, mime: Any, data: Any, kind: ImageSourceKind, part: dict[str, Any], where: str
    ) -> ContentBlock | None:
        if not (isinstance(mime, str) and mime.startswith("image/")):
            self._drop(part, where, f"only images are canonical media, not {mime!r}")
            return None
        if not (isinstance(data, str) and data):
            self._drop(part, where, "an image part without data")
            return None
        try:
            return ImageBlock.model_validate(
                {"type": "image", "source": {"kind": kind, "data": data}, "media_type": mime}
            )
        except ValidationError as exc:
            raise WireFormatError(
                f"invalid image: {pydantic_problems(exc)[0]}", provider=NAME, path=where
            ) from exc

    def _tool_messages(self, responses: list[tuple[int, dict[str, Any]]], path: str, i: int) -> None:
        """Pair a turn's functionResponses with the previous model turn's calls: by id when
        both carry one, else by name in order; the counts must match."""
        if self.pending_at != i - 1 or len(responses) != len(self.pending):
            raise WireFormatError(
                f"{len(responses)} function response(s) answer {len(self.pending)} function call(s) of the "
                "previous model turn",
                provider=NAME,
                path=path + ".parts",
            )
        free = list(self.pending)
        for j, response in responses:
            where = f"{path}.parts[{j}].functionResponse"
            call = _match_call(free, response, where)
            free.remove(call)
            self._tool_message(call[0], response, where)
        self.pending = []

    def _tool_message(self, canonical: str, response: dict[str, Any], where: str) -> None:
        value = _dict(
            response.get("response") if response.get("response") is not None else {}, where + ".response"
        )
        text, is_error = _result_content(value)
        content: list[ContentBlock] = [TextBlock(type="text", text=text)] if text else []
        for k, part in enumerate(_list(response.get("parts") or [], where + ".parts")):
            block = self._user_block(_dict(part, f"{where}.parts[{k}]"), f"{where}.parts[{k}]")
            if isinstance(block, ImageBlock):
                content.append(block)
        result = ToolResultBlock(
            type="tool_result", tool_use_id=canonical, content=content, is_error=is_error
        )
        self._add(Role.tool, [result], where, parent_tool_use_id=canonical)

    def _drop(self, part: Any, path: str, reason: str) -> None:
        """Keep what has no canonical form in `WireImport.dropped`, with a WARN."""
        import_drop(
            self.dropped, adapter=NAME, session_id=self.session_id, path=path, value=part, reason=reason
        )

    # tools and options

    def _tools(self, tools: Any) -> list[ToolDefinition]:
        out: list[ToolDefinition] = []
        if tools is None:
            return out
        for t, item in enumerate(_list(tools, "tools")):
            tool = _dict(item, f"tools[{t}]")
            for key, value in tool.items():
                if key not in ("functionDeclarations", "function_declarations"):
                    self._drop(value, f"tools[{t}].{key}", f"a {key} tool has no canonical form")
                    continue
                for d, entry in enumerate(_list(value, f"tools[{t}].{key}")):
                    where = f"tools[{t}].{key}[{d}]"
                    declaration = _dict(entry, where)
                    schema = declaration.get("parameters")
                    if schema is None:
                        schema = _field(declaration, "parametersJsonSchema", "parameters_json_schema")
                    out.append(
                        imported_tool(
                            declaration.get("name"),
                            declaration.get("description"),
                            schema,
                            provider=NAME,
                            path=where,
                        )
                    )
                    rest = {
                        k: v
                        for k, v in declaration.items()
                        if k
                        not in (
                            "name",
                            "description",
                            "parameters",
                            "parametersJsonSchema",
                            "parameters_json_schema",
                        )
                    }
                    for name, extra in rest.items():
                        self._drop(extra, f"{where}.{name}", "no canonical place for this declaration field")
        return out

    def _tool_choice(self, config: Any) -> str | None:
        if config is None:
            return None
        calling = _field(_dict(config, "toolConfig"), "functionCallingConfig", "function_calling_config")
        if calling is None:
            self.unmapped["toolConfig"] = config
            return None
        calling = _dict(calling, "toolConfig.functionCallingConfig")
        mode = calling.get("mode")
        names = _field(calling, "allowedFunctionNames", "allowed_function_names")
        if mode == "ANY" and isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
            return names[0]
        choice = (
            {"AUTO": "auto", "ANY": "required", "NONE": "none"}.get(mode) if isinstance(mode, str) else None
        )
        if choice is None or names or set(config) - {"functionCallingConfig", "function_calling_config"}:
            self.unmapped["toolConfig"] = config
        return choice

    def _generation(self, config: Any, options: AdapterOptions) -> None:
        if config is None:
            return
        rest = dict(_dict(config, "generationConfig"))
        for attr, camel, snake, kind in (
            ("max_tokens", "maxOutputTokens", "max_output_tokens", int),
            ("temperature", "temperature", "temperature", float),
            ("top_p", "topP", "top_p", float),
            ("stop", "stopSequences", "stop_sequences", list),
        ):
            value = _field(rest, camel, snake)
            if value is None:
                continue
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise WireFormatError(
                    f"{camel} has the wrong type", provider=NAME, path=f"generationConfig.{camel}"
                )
            setattr(options, attr, value)
            rest.pop(camel, None)
            rest.pop(snake, None)
        thinking = _field(rest, "thinkingConfig", "thinking_config")
        if thinking is not None:
            thinking = dict(_dict(thinking, "generationConfig.thinkingConfig"))
            budget = _field(thinking, "thinkingBudget", "thinking_budget")
            if isinstance(budget, int) and not isinstance(budget, bool):
                options.thinking_budget = budget
                for key in ("thinkingBudget", "thinking_budget"):
                    thinking.pop(key, None)
                include = _field(thinking, "includeThoughts", "include_thoughts")
                if include is None or include == (budget != 0):
                    thinking.pop("includeThoughts", None)
                    thinking.pop("include_thoughts", None)
            rest.pop("thinkingConfig", None)
            rest.pop("thinking_config", None)
            if thinking:
                rest["thinkingConfig"] = thinking
        if rest:
            self.unmapped["generationConfig"] = rest


def _match_call(
    free: list[tuple[str, str, str | None]], response: dict[str, Any], where: str
) -> tuple[str, str, str | None]:
    name = response.get("name")
    provider_id = response.get("id")
    if isinstance(provider_id, str) and provider_id:
        for call in free:
            if call[2] == provider_id:
                return call
    for call in free:
        if call[1] == name:
            return call
    raise WireFormatError(
        f"functionResponse {name!r} matches no function call of the previous model turn",
        provider=NAME,
        path=where + ".name",
    )


def _import_model(value: Any) -> str | None:
    """`models/gemini-2.5-flash` (or a bare name) -> `gemini:gemini-2.5-flash`."""
    if not isinstance(value, str):
        return None
    match = _MODEL_NAME.match(value)
    return f"{NAME}:{match['name']}" if match else None


ADAPTER = GeminiAdapter()

__all__ = [
    "ADAPTER",
    "DEFAULT_IMPORT_MODEL",
    "ENDPOINT_KIND",
    "SKIP_SIGNATURE",
    "GeminiAdapter",
    "GeminiStreamDecoder",
]
