"""Gemini responses -> canonical: the part folding and response state shared by whole
responses, stream chunks and recorded model turns.

One path: the parts of a model turn are folded into canonical StreamEvents (`PartFolder`), and
a StreamAssembler folds the events into blocks. A stream feeds its chunks' events to the
assembler as they arrive; a whole response is read as a stream of one chunk, so the two give
the same message by construction; an imported model turn takes the assembler's blocks.

Folding rule: parts of one kind (text, thought) extend the open block of that kind; a new block
starts when the kind changes, at every `functionCall`, after a kept extra part, and when a
second signature would land on an already signed block. A stream's text deltas therefore
become one text block (replayed as one part carrying the block's signature).

`thoughtSignature` sits on a part (a thought, the first `functionCall` of a step, a text part,
or a part whose text is empty) and must come back on the same part position. A signature on a
thought stays on its ThinkingBlock; every other is kept in provider_raw `part_signatures:
[[block_index, signature], ...]`, and parts with no canonical block (an empty-text signature
part, generated media, ...) in `extra_parts: [[position, part], ...]`, re-inserted before
block `position` on replay (to_wire).

Gemini's code execution arrives whole: `executableCode` is a server_tool_use block and
`codeExecutionResult` the server_tool_result after it (a BlockEvent each), so a stream and a
whole reply carry them alike. `groundingMetadata` (on the candidate, in a stream on the last
chunk) becomes url citations on the text blocks its segments fall in: the folder keeps each text
block's text and where each part's text began, turns a segment's UTF-8 byte offsets into
character offsets of the block, and re-sends each cited block whole (a BlockEvent replaces the
text that streamed at its index). What cannot become a citation, and the search entry point and
queries, stay in provider_raw `groundingMetadata`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from metis_schema.v3 import (
    BlockEvent,
    ErrorEvent,
    Message,
    MessageCompleteEvent,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UrlCitation,
)
from pydantic import ValidationError

from ... import _json
from ...assembly import RequestContext, StreamAssembler
from ...errors import WireFormatError
from ...usage import TokenCounts, normalize_usage, usage_event
from ...validation import pydantic_problems
from .._kit.losses import Losses, wire_message
from .._kit.provider_errors import error_event
from .._kit.reader import read
from .facts import (
    CODE_EXECUTION,
    CODE_OK,
    ENDPOINT_KIND,
    FACTS,
    NAME,
    UNNAMED_CALL,
    block_reason,
    block_stop_reason,
    finish_reason,
)
from .wire import (
    CitationSource,
    CodeExecutionResult,
    ExecutableCode,
    FunctionCall,
    GenerateContentResponse,
    GroundingChunk,
    GroundingMetadata,
    Part,
    ResponseBody,
    Segment,
    UsageMetadata,
)

_B = TypeVar("_B", ServerToolUseBlock, ServerToolResultBlock)


def _args_text(args: Any, path: str) -> str:
    """A call's args as the JSON text a ToolUseInputDeltaEvent carries (a string passes as is)."""
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    try:
        return _json.dumps(args).decode()
    except (ValueError, TypeError) as exc:  # a NaN or an infinity (only a Python caller can
        # hand one over), or nesting deeper than the JSON writer goes (orjson's TypeError)
        raise WireFormatError(f"functionCall args are not JSON: {exc}", provider=NAME, path=path) from None


class PartFolder:
    """Folds the parts of one model turn into StreamEvents plus replay data (module docstring)."""

    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.kinds: list[str] = []
        self.signed: list[bool] = []
        self.part_signatures: list[list[Any]] = []
        self.extra_parts: list[list[Any]] = []
        self.calls: list[tuple[str, str, str | None]] = []  # (canonical id, name, gemini id)
        self.string_args: list[str] = []  # calls whose args came as a JSON string, not an object
        self.barrier = False  # an extra part sits after the open block: the next part starts anew
        self.texts: dict[int, list[str]] = {}  # text block index -> its text so far
        self.text_sizes: dict[int, int] = {}  # text block index -> characters so far (summing
        # the pieces for each new part made a stream of many small text parts quadratic)
        self.places: list[tuple[int, int] | None] = []  # part n -> (text block, char offset) of its text
        self.citations: dict[int, list[UrlCitation]] = {}  # text block index -> its grounding
        self.server_calls: list[str] = []  # ids of the executableCode parts so far
        self._place: tuple[int, int] | None = None

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

    def fold_all(self, parts: list[Part], where: str) -> list[StreamEvent]:
        """The (validated) parts at `<where>.parts`, in order -> their events."""
        events: list[StreamEvent] = []
        for j, part in enumerate(parts):
            events.extend(self.fold(part, f"{where}.parts[{j}]"))
        return events

    def fold(self, part: Part, path: str) -> list[StreamEvent]:
        """One validated part -> the events it produces (and where its text went, for grounding)."""
        self._place = None
        events = self._fold(part, path)
        self.places.append(self._place)
        return events

    def _fold(self, part: Part, path: str) -> list[StreamEvent]:
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if call is not None:
            return self._call(call, signature, path + ".functionCall.args")
        code = part.get("executableCode")
        if code is not None:
            return self._server_call(code, signature, path + ".executableCode")
        result = part.get("codeExecutionResult")
        if result is not None:
            return self._server_result(result, signature, path + ".codeExecutionResult")
        text = part.get("text")
        if part.get("thought"):
            return self._thought(text or "", signature)
        if text is not None or (signature is not None and set(part) == {"thoughtSignature"}):
            return self._text(text or "", signature)
        if part:
            self._extra(part, path)
        return []

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
        if signature is not None:
            self._sign(index, signature, on_block=False)
        size = self.text_sizes.get(index, 0)
        self._place = (index, size)
        self.texts.setdefault(index, []).append(text)
        self.text_sizes[index] = size + len(text)
        return [TextDeltaEvent(type="text_delta", index=index, text=text)]

    def _thought(self, text: str, signature: str | None) -> list[StreamEvent]:
        index = self._open("thinking", signature)
        if text == "" and signature is None:
            return []
        if index is None:
            index = self._new("thinking")
        if signature is not None:
            self._sign(index, signature, on_block=True)
        return [
            ThinkingDeltaEvent(type="thinking_delta", index=index, text=text or None, signature=signature)
        ]

    def _call(self, call: FunctionCall, signature: str | None, args_path: str) -> list[StreamEvent]:
        name = call["name"]
        provider_id = call.get("id") or None
        canonical = self.context.tool_ids.register_incoming(NAME, provider_id)
        index = self._new("tool_use")
        self.calls.append((canonical, name, provider_id))
        args = call.get("args")
        if isinstance(args, str):
            self.string_args.append(canonical)
        if signature is not None:
            self._sign(index, signature, on_block=False)
        return [
            ToolUseStartEvent(
                type="tool_use_start", index=index, id=canonical, name=name, provider_id=provider_id
            ),
            ToolUseInputDeltaEvent(
                type="tool_use_input_delta", index=index, partial_json=_args_text(args, args_path)
            ),
            ToolUseEndEvent(type="tool_use_end", index=index),
        ]

    def _server_call(self, code: ExecutableCode, signature: str | None, path: str) -> list[StreamEvent]:
        """`executableCode` -> a whole server_tool_use block (Gemini ran the code itself)."""
        index = self._new("server_tool_use")
        call_id = code.get("id") or f"{UNNAMED_CALL}{len(self.server_calls)}"
        self.server_calls.append(call_id)
        if signature is not None:
            self._sign(index, signature, on_block=False)
        code_input = {key: value for key, value in code.items() if key != "id" and value is not None}
        block = _whole(
            ServerToolUseBlock,
            {
                "type": "server_tool_use",
                "id": call_id,
                "provider": NAME,
                "name": CODE_EXECUTION,
                "input": code_input,
            },
            path,
        )
        return [BlockEvent(type="block", index=index, block=block)]

    def _server_result(
        self, result: CodeExecutionResult, signature: str | None, path: str
    ) -> list[StreamEvent]:
        """`codeExecutionResult` -> a whole server_tool_result block answering the code before it;
        its output is the text, the outcome (and any other field) stays in provider_data."""
        index = self._new("server_tool_result")
        answers = result.get("id") or (
            self.server_calls[-1] if self.server_calls else f"{UNNAMED_CALL}result"
        )
        if signature is not None:
            self._sign(index, signature, on_block=False)
        output = result.get("output")
        kept = {
            key: value for key, value in result.items() if key not in ("id", "output") and value is not None
        }
        fields: dict[str, Any] = {
            "type": "server_tool_result",
            "tool_use_id": answers,
            "provider": NAME,
            "name": CODE_EXECUTION,
            "content": [{"type": "text", "text": output}] if output else [],
            "is_error": result.get("outcome") not in (*CODE_OK, None),
        }
        if kept:
            fields["provider_data"] = kept
        return [BlockEvent(type="block", index=index, block=_whole(ServerToolResultBlock, fields, path))]

    def ground(self, metadata: GroundingMetadata) -> tuple[list[StreamEvent], bool]:
        """groundingMetadata -> each text block it supports again, whole, with its url citations
        (a BlockEvent replaces the text that streamed at that index), and whether every support
        became a citation. A segment is UTF-8 byte offsets into part `partIndex` (the first text
        part from there on, since thought parts carry no answer)."""
        chunks = metadata.get("groundingChunks") or []
        carried = True
        touched: set[int] = set()
        for support in metadata.get("groundingSupports") or []:
            segment = support.get("segment") or Segment()
            for k in support.get("groundingChunkIndices") or []:
                chunk = chunks[k] if k < len(chunks) else GroundingChunk()
                source = chunk.get("web") or chunk.get("retrievedContext") or chunk.get("maps")
                if source is None:
                    carried = False
                    continue
                title = source.get("title")
                carried &= self._cite(segment, source.get("uri"), title, segment.get("text"), touched)
        return self._cited(touched), carried

    def recite(self, sources: list[CitationSource]) -> tuple[list[StreamEvent], bool]:
        """citationMetadata (the sources a recited passage comes from) -> url citations the same
        way, the cited text being the passage itself; a license has no canonical field."""
        carried = True
        touched: set[int] = set()
        for source in sources:
            segment = Segment(startIndex=source.get("startIndex") or 0)
            if source.get("endIndex") is not None:
                segment["endIndex"] = source.get("endIndex")
            carried &= source.get("license") is None
            carried &= self._cite(segment, source.get("uri"), None, None, touched)
        return self._cited(touched), carried

    def _cite(
        self, segment: Segment, uri: str | None, title: str | None, cited: str | None, touched: set[int]
    ) -> bool:
        """Add one url citation of `segment` to its text block; False when it cannot be one."""
        located = self._locate(segment)
        if located is None or not uri:
            return False
        block, start, end = located
        if cited is None:
            cited = "".join(self.texts[block])[start:end]
        citation = UrlCitation(
            type="url", url=uri, title=title, cited_text=cited, start_index=start, end_index=end
        )
        found = self.citations.setdefault(block, [])
        if citation not in found:  # a later chunk may repeat the metadata
            found.append(citation)
            touched.add(block)
        return True

    def _cited(self, touched: set[int]) -> list[StreamEvent]:
        """The text blocks that gained citations, whole."""
        return [
            BlockEvent(
                type="block",
                index=block,
                block=TextBlock(
                    type="text", text="".join(self.texts[block]), citations=self.citations[block]
                ),
            )
            for block in sorted(touched)
        ]

    def _locate(self, segment: Segment) -> tuple[int, int, int] | None:
        """(text block, start, end) in characters of the block, for a segment."""
        first = segment.get("partIndex") or 0
        place = next((p for p in self.places[first:] if p is not None), None)
        if place is None:
            return None
        block, base = place
        text = "".join(self.texts[block])
        start = _chars(text, base, segment.get("startIndex") or 0)
        end_bytes = segment.get("endIndex")
        end = len(text) if end_bytes is None else _chars(text, base, end_bytes)
        return block, start, max(start, end)

    def _keep(self, part: dict[str, Any]) -> None:
        """Keep a part for replay before the next block; it also closes the open block, so
        text on both sides of it never merges."""
        self.extra_parts.append([len(self.kinds), part])
        self.barrier = True

    def _extra(self, part: Part, path: str) -> None:
        """A part with no canonical block (generated media, `toolCall`, ...): kept for replay."""
        self._keep(dict(part))
        keys = sorted(part)
        reason = f"part ({', '.join(keys)}) has no canonical block; kept in provider_raw for replay to gemini"
        kind = next(
            (k for k in keys if k not in ("thought", "thoughtSignature")), keys[0] if keys else "part"
        )
        Losses(NAME, self.context.session_id).lost(
            self.context.message_id or wire_message(path), kind, reason, at=f"part {path}"
        )


def _chars(text: str, base: int, nbytes: int) -> int:
    """The character offset `nbytes` UTF-8 bytes after character `base` (clamped to the text)."""
    return base + len(text[base:].encode()[:nbytes].decode(errors="ignore"))


def _whole(model: type[_B], fields: dict[str, Any], path: str) -> _B:
    """A whole block from wire fields; what cannot be one is a WireFormatError at `path`."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise WireFormatError(
            f"invalid part: {pydantic_problems(exc)[0]}", provider=NAME, path=path
        ) from None


class ResponseState:
    """One response, whole or streamed: folded parts, finish, usage, ids, and the closing events."""

    def __init__(self, context: RequestContext) -> None:
        self.folder = PartFolder(context)
        self.response_id: str | None = None
        self.model_version: str | None = None
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.block_reason: str | None = None
        self.counts: TokenCounts | None = None
        self.grounding: dict[str, Any] = {}  # groundingMetadata not carried as citations
        self.recitation: dict[str, Any] = {}  # citationMetadata, when not all of it is citations
        self.completed = False
        self.failed = False

    def consume(self, chunk: GenerateContentResponse, path: str = "") -> list[StreamEvent]:
        """One validated GenerateContentResponse (a whole body, or a stream chunk at `path`) -> events."""
        if self.failed:
            return []
        error = chunk.get("error")
        if error is not None:
            self.failed = True
            return [error_event(FACTS, chunk, path=path.rstrip("."), status_code=error.get("code"))]
        self.response_id = chunk.get("responseId") or self.response_id
        self.model_version = chunk.get("modelVersion") or self.model_version
        events: list[StreamEvent] = []
        candidates = chunk.get("candidates")
        if candidates:
            candidate = candidates[0]
            content = candidate.get("content")
            if content is not None:
                events = self.folder.fold_all(content.get("parts") or [], f"{path}candidates[0].content")
            grounding = candidate.get("groundingMetadata")
            if grounding is not None:
                cited, carried = self.folder.ground(grounding)
                events.extend(cited)
                cites = ("groundingChunks", "groundingSupports")
                self.grounding = {k: v for k, v in grounding.items() if not carried or k not in cites}
            recitation = candidate.get("citationMetadata")
            if recitation is not None:
                cited, carried = self.folder.recite(recitation.get("citationSources") or [])
                events.extend(cited)
                self.recitation = {} if carried else dict(recitation)
            self.finish_reason = finish_reason(candidate.get("finishReason")) or self.finish_reason
            self.finish_message = candidate.get("finishMessage") or self.finish_message
        feedback = chunk.get("promptFeedback")
        if feedback is not None:
            self.block_reason = block_reason(feedback.get("blockReason")) or self.block_reason
        usage = chunk.get("usageMetadata")
        if usage is not None:
            counts = normalize_usage(NAME, usage, read_as=UsageMetadata)  # read with the chunk
            if counts != self.counts:
                self.counts = counts
                events.append(usage_event(counts))
        if (self.finish_reason or self.block_reason) and not self.completed:
            events.extend(self.complete())
        return events

    def stop_reason(self) -> StopReason:
        """Derived from content first: any call is `tool_use`, whatever finishReason says."""
        if self.folder.calls:
            return StopReason.tool_use
        if self.finish_reason is not None:
            return FACTS.stop_reason(self.finish_reason)
        if self.block_reason is not None:
            return block_stop_reason(self.block_reason)
        return StopReason.other

    def complete(self) -> list[StreamEvent]:
        """The closing events. An empty answer cannot be a COMPLETE message (spec §5.1.1), so it
        also gets an error event: the message ends as ERROR, carrying the provider's reason."""
        self.completed = True
        events: list[StreamEvent] = []
        if not self.folder.kinds:
            reason = self.finish_reason or self.block_reason
            detail = (
                f"finishReason {self.finish_reason}"
                if self.finish_reason
                else f"blockReason {self.block_reason}"
            )
            message = (
                self.finish_message or f"Gemini returned no content ({detail if reason else 'no reason'})"
            )
            events.append(
                ErrorEvent(type="error", code=reason or "EMPTY_RESPONSE", message=message, provider=NAME)
            )
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
        if self.grounding:
            raw["groundingMetadata"] = self.grounding
        if self.recitation:
            raw["citationMetadata"] = self.recitation
        raw.update(self.folder.replay_raw())
        return raw


def read_response(body: Any, context: RequestContext) -> Message:
    """A whole response -> one canonical message: read as a stream of one chunk (a missing
    finishReason still completes it), so it equals the assembled stream field for field."""
    reply = read(ResponseBody, body, provider=NAME)
    if reply.get("error") is not None:
        raise FACTS.parse_error(body)
    response = ResponseState(context)
    assembler = StreamAssembler(context, NAME)
    assembler.feed_all(response.consume(reply))
    if not response.completed:
        assembler.feed_all(response.complete())
    return assembler.finish(response.provider_raw())


__all__ = ["PartFolder", "ResponseState", "read_response"]
