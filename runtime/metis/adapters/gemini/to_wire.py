"""Canonical messages -> a generateContent request body (camelCase, as the REST API documents).

- Roles are `user` and `model`; system messages become the top-level `systemInstruction`; tool
  results are `functionResponse` parts inside a `user` content, and a parallel batch is ONE user
  content with the responses in the order of their calls.
- Calls usually carry no id. A call's Gemini id (when Gemini gave one) is echoed back from the
  session's ToolIdMap; other calls are paired with their responses by order and name. A foreign
  provider's id is never sent.
- Replay data (thought signatures, extra parts, arguments Gemini sent as text) is used only for
  messages this adapter produced for this endpoint kind (`provider_raw.endpoint`) at the
  endpoint the request goes to (`provenance.replays_opaque`); those turns go
  back exactly as Gemini sent them. Other turns of the current turn get Google's documented
  `skip_thought_signature_validator` on their first call.
- History starting with a model turn is sent as is, with a WARN: no user turn is invented.
- An empty text block is written (`{"text": ""}`) only when its turn has no other part: it then
  stands for the turn, which Gemini would refuse without parts and the replay would lose.
- Media (image, document, audio, video) -> `inlineData` (base64, a data: URL, a workspace file)
  or `fileData` (an http(s) URL, or a file of Gemini's File API: a gemini `file_id`); documents
  lose title, context and citations_enabled (no field), with one WARN. Another provider's file
  id is dropped (§7.3).
- Gemini's own code execution (server_tool_use / server_tool_result of provider gemini) goes back
  as the `executableCode` / `codeExecutionResult` parts it came in; any other server tool block
  ran elsewhere and is dropped (§7.3). Citations are not sent: grounding is reply metadata, and a
  request's text part has no place for it.
- Tool schemas go in `parameters` or `parametersJsonSchema`, as `schema.schema_field` decides;
  a recorded `parameters` schema goes back verbatim while its tool is unedited
  (`schema.recorded_parameters`). `tools` is a camelCase list, unless every tool was imported
  from one request that sent them in snake_case or as one object (`TOOLS_FORM`): then so again.
- Tool results travel as `{"output": <text>}`, or `{"error": <text>}` when `is_error`; result
  text that is a JSON object is sent as that object (Gemini treats an object without
  `output`/`error` keys as the whole output; an object with an `error` key as error details),
  wrapped in `output`/`error` when sending it bare would flip its error meaning. The importer
  reverses this, so a recorded response object round-trips unchanged.
- Canonical options go where the facts row says (structured output as `responseMimeType`
  application/json + `responseJsonSchema`); `provider_options["gemini"]`, then `extra`, are
  deep-merged last, other providers' options reported as dropped (`options.own_fields`),
  and the `spelling` directive an import recorded spells the body as its request was
  (snake_case fields and parts, a content without `role`: `respell`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    AudioBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    VideoBlock,
)
from typing_extensions import TypedDict

from ... import _json
from ...catalog import load_catalog
from ...errors import InvariantError
from ...workspace import workspace_file_base64
from .._kit.base import AdapterOptions, WireBody
from .._kit.images import parse_data_url
from .._kit.losses import Losses
from .._kit.media_admission import admit, document_losses, request_capabilities
from .._kit.options import OPTION_PATHS, directive, merge, put, split_directives
from .._kit.provenance import own_raw, produced_at, replays_opaque, sent_to
from .._kit.provider_tools import ROWS, is_provider_tool, warn_deferred, write_tool
from .._kit.reader import read
from .._kit.tool_fields import warn_kept
from .declarations import JSON_SCHEMA_FIELD, recorded_parameters, schema_field
from .facts import CODE_EXECUTION, ENDPOINT_KIND, FACTS, NAME, SKIP_SIGNATURE, UNNAMED_CALL

Media = ImageBlock | DocumentBlock | AudioBlock | VideoBlock
"""The blocks a Gemini media part (`inlineData` / `fileData`) carries."""

INCLUDE_THOUGHTS = "generationConfig.thinkingConfig.includeThoughts"
"""Written from the thinking budget (on unless the budget is 0); an import takes that value
back out, any other stays Gemini's own."""

TOOLS_FORM = "request_tools"
"""The key of `provider_data["gemini"]` where an import records how its request spelled
`tools` when not as this writer does: `{"shape": "object"}` (one Tool object, not a list),
`{"spelling": "snake_case"}` (`SNAKE_CASE`), or both."""

SNAKE_CASE = MappingProxyType(
    {"functionDeclarations": "function_declarations", "parametersJsonSchema": "parameters_json_schema"}
)
"""The function fields of a Tool object and a declaration this writer names, in snake_case
(provider tools replay their recorded spelling; `parameters` schemas their recorded form)."""


class Replay(TypedDict, total=False):
    """The replay data from_wire keeps in a Gemini message's provider_raw."""

    endpoint: str
    part_signatures: list[tuple[int, str]]
    extra_parts: list[tuple[int, dict[str, Any]]]
    part_fields: list[tuple[int, dict[str, Any]]]
    """A user turn's further part fields (`videoMetadata`, ...) by block index (the importer's
    `_part_fields`), put back on the part made from that block."""
    unparsed_arguments: dict[str, str]
    string_args: list[str]


def _replay(raw: dict[str, Any]) -> Replay:
    """The replay data of a message's own provider_raw (`own_raw`), checked against `Replay`
    ({}: none)."""
    if not raw:
        return Replay()
    return read(Replay, raw, provider=NAME, path="provider_raw", what="replay data")


def write_request(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
) -> WireBody:
    """Canonical messages -> a generateContent body (see the module docstring)."""
    entry = load_catalog().resolve(options.model)
    caps = request_capabilities(entry, messages, adapter=NAME)
    writer = _Writer(messages, options, caps, entry.id)
    contents = writer.contents()
    writer.losses.cache_points(
        messages, "Gemini has no per-block cache marker; explicit caching is the cachedContents API"
    )
    writer.losses.citations(messages, "a Gemini part has no citation field")
    body: WireBody = {}
    if writer.system_parts:
        body["systemInstruction"] = {"parts": writer.system_parts}
    body["contents"] = contents
    FACTS.tools_to_wire(body, _tools(tools, options.session_id), options.tool_choice)
    FACTS.options_to_wire(
        {option: getattr(options, option) for option in FACTS.options},
        body,
        session_id=options.session_id,
        spelled=directive(options, NAME, OPTION_PATHS),
    )
    if options.thinking_budget is not None:  # thoughts are shown whenever thinking is on
        put(body, INCLUDE_THOUGHTS, options.thinking_budget != 0)
    FACTS.output_schema_to_wire(options.output_schema, body)
    _fill_missing_signatures(
        contents, options.session_id, exact=writer.exact, start=writer.current_turn, origin=writer.origin
    )
    if contents and contents[0]["role"] == "model":
        reason = "history starts with a model turn; sent as is (no user turn invented)"
        writer.losses.lost(writer.origin[0], "message", reason)
    directives, fields = split_directives(options, NAME)
    merge(body, fields)
    respell(body, directives.get(SPELLING))
    return body


SPELLING = "spelling"
"""The `metis` directive an import records when its request was spelled other than this
writer spells a body (`respell`): `{"snake_case": [top-level fields], "parts": [[content,
part, kind]], "roleless": [content indexes], "system_role": <role>}`. The wire accepts both
spellings (proto JSON); a replay is the request as it was sent."""
_DATA_KEYS = frozenset(
    {"args", "response", "responseSchema", "responseJsonSchema", "parameters", "parametersJsonSchema"}
)
"""Fields whose value is the caller's data (call arguments, results, schemas): renamed, never
looked into."""
_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_case(value: Any) -> Any:
    """`value` with every field name in snake_case, the caller's data (`_DATA_KEYS`) left as it is."""
    if isinstance(value, list):
        return [snake_case(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        _UPPER.sub("_", key).lower(): v if key in _DATA_KEYS else snake_case(v) for key, v in value.items()
    }


def respell(body: WireBody, spelling: Any) -> None:
    """`body` spelled as the imported request was (`SPELLING`): each part only while the part
    written there is still of the kind recorded, each roleless content only while it is a
    user content; so an edited conversation is never spelled wrong, at worst camelCase."""
    if not isinstance(spelling, dict):
        return
    contents = body.get("contents") or []
    for i, j, kind in spelling.get("parts") or ():
        parts = contents[i].get("parts") or [] if i < len(contents) else []
        if j < len(parts) and kind in parts[j]:
            parts[j] = snake_case(parts[j])
    for i in spelling.get("roleless") or ():
        if i < len(contents) and contents[i].get("role") == "user":
            del contents[i]["role"]
    system = body.get("systemInstruction")
    if isinstance(system, dict) and spelling.get("system_role"):
        system["role"] = spelling["system_role"]
    for field in spelling.get("snake_case") or ():
        camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), field)
        if camel in body:
            body[field] = snake_case(body.pop(camel))


def _tools(tools: Sequence[ToolDefinition], session_id: str) -> list[dict[str, Any]] | dict[str, Any]:
    """Tool objects in order: one `functionDeclarations` object where the first function tool
    is, each provider tool (`provider_tools`) in an object of its own, except tools an
    import read from one shared object, which go back into one (and into the functions'
    object when they shared it); spelled as their request did (`_as_recorded`)."""
    warn_deferred(ROWS[NAME], tools, session_id=session_id)
    warn_kept(NAME, tools, session_id=session_id)
    out: list[dict[str, Any]] = []
    functions: dict[str, Any] | None = None
    shared: dict[int, dict[str, Any]] = {}  # recorded object index -> the object written for it
    for tool in tools:
        if not is_provider_tool(tool):
            if functions is None:
                functions = {"functionDeclarations": []}
                out.append(functions)
            functions["functionDeclarations"].append(declaration(tool))
            continue
        wire = write_tool(ROWS[NAME], tool, session_id=session_id)
        if wire is None:
            continue
        own = (tool.provider_data or {}).get(NAME, {})
        group = own.get("object") if "tool" in own else None
        if own.get("with_functions") and isinstance(group, int):
            if functions is None:
                functions = {"functionDeclarations": []}
                out.append(functions)
            shared.setdefault(group, functions)
        target = shared.get(group) if isinstance(group, int) else None
        if target is not None:
            target.update(wire)
            continue
        out.append(wire)
        if isinstance(group, int):
            shared[group] = wire
    if functions is not None and not functions["functionDeclarations"]:
        del functions["functionDeclarations"]
    return _as_recorded(out, tools)


def _as_recorded(
    out: list[dict[str, Any]], tools: Sequence[ToolDefinition]
) -> list[dict[str, Any]] | dict[str, Any]:
    """`out` in the form the tools' request sent them (`TOOLS_FORM`), when every tool was
    imported from one such request (an added or foreign tool: the REST camelCase list)."""
    forms = [(tool.provider_data or {}).get(NAME, {}).get(TOOLS_FORM) for tool in tools]
    form = forms[0] if forms and isinstance(forms[0], dict) and forms.count(forms[0]) == len(forms) else {}
    if form.get("spelling") == "snake_case":
        out = [_snake(tool) for tool in out]
        key = SNAKE_CASE["functionDeclarations"]
        for tool in out:
            if key in tool:
                tool[key] = [_snake(d) for d in tool[key]]
    if form.get("shape") == "object" and len(out) == 1:
        return out[0]
    return out


def _snake(fields: dict[str, Any]) -> dict[str, Any]:
    return {SNAKE_CASE.get(key, key): value for key, value in fields.items()}


def declaration(tool: ToolDefinition) -> dict[str, Any]:
    """A functionDeclaration: the recorded `parameters` of an unedited tool, else its schema
    in the field `schema.schema_field` picks. A `parameters` schema with no properties is left
    out: Gemini rejects an OBJECT schema whose `properties` is empty."""
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    recorded = recorded_parameters(tool)
    if recorded is not None:
        out["parameters"] = recorded
        return out
    schema = tool.input_schema
    field = schema_field(tool)
    if field == JSON_SCHEMA_FIELD or schema.get("properties") or schema.get("type") not in ("object", None):
        out[field] = schema
    return out


def _fill_missing_signatures(
    contents: list[dict[str, Any]], session_id: str, *, exact: set[int], start: int, origin: dict[int, str]
) -> None:
    """Google's documented fallback for history without signatures (another provider's turns,
    or Gemini turns whose signatures cannot be replayed here): Gemini 3 validates only the
    current turn (after the last plain user message), on the first functionCall of each model
    step there, so exactly those parts get `skip_thought_signature_validator`. Turns replayed
    exactly (`exact`: indexes into contents) are left as Gemini sent them. One WARN per request,
    naming the first message filled (`origin`: content index -> message id)."""
    filled: list[str] = []
    for i in range(start, len(contents)):
        content = contents[i]
        if content["role"] != "model" or i in exact:
            continue
        first = next((part for part in content["parts"] if "functionCall" in part), None)
        if first is not None and "thoughtSignature" not in first:
            first["thoughtSignature"] = SKIP_SIGNATURE
            filled.append(origin[i])
    if filled:
        reason = (
            f"function calls in the current turn have no gemini thought signature: {len(filled)} "
            f"turn(s) sent with {SKIP_SIGNATURE}"
        )
        Losses(NAME, session_id).lost(filled[0], "tool_use", reason)


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
        self, messages: Sequence[Message], options: AdapterOptions, caps: AdapterCapabilities, model_id: str
    ) -> None:
        self.messages = messages
        self.options = options
        self.caps = caps
        self.model_id = model_id  # the catalog's id, as every adapter names the model
        self.system_parts: list[dict[str, Any]] = []
        self.exact: set[int] = set()  # contents that replay a Gemini turn of this endpoint exactly
        self.origin: dict[int, str] = {}  # index in contents of a model turn -> its message's id
        self.current_turn = 0  # index in contents after the last user message
        self.gemini_ids = options.tool_ids.issued_by(NAME)  # canonical ids Gemini itself issued
        self.calls = _call_map(messages)
        self.losses = Losses(NAME, options.session_id)

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
                    self.origin[len(contents)] = message.id
                    contents.append({"role": "model", "parts": parts})
        if batch:
            contents.append({"role": "user", "parts": [part for _, part in sorted(batch, key=_order)]})
        return contents

    # user and tool messages

    def _user_parts(self, message: Message) -> list[dict[str, Any]]:
        further = dict(_replay(own_raw(message, NAME)).get("part_fields", []))
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            part: dict[str, Any] | None = None
            if isinstance(block, TextBlock):
                if block.text:
                    part = {"text": block.text}
            elif isinstance(block, Media):
                part = self._media(block, message, index)
            else:
                self.losses.block(message, index, block.type, "not allowed in a user message")
            if part is not None:
                parts.append({**part, **further.get(index, {})})
        return parts or _empty_turn(message)

    def _media(self, block: Media, message: Message, index: int) -> dict[str, Any] | None:
        """An image, document, audio or video block -> `inlineData` (base64 bytes: inline,
        a data: URL, or a workspace file) or `fileData` (an http(s) URL, or a file Gemini's File
        API holds). What the model or Gemini cannot take (`media_admission.admit`: another provider's
        file id among it) is dropped with the WARN."""
        refused = admit(block, self.caps, self.model_id, FACTS)
        if refused is not None:
            self.losses.block(message, index, block.type, refused)
            return None
        if isinstance(block, DocumentBlock):
            document_losses(block, message, index, adapter=NAME, part="a gemini part")
        source = block.source
        if source.kind == MediaSourceKind.file_id:
            return {"fileData": {"mimeType": block.media_type, "fileUri": source.data}}
        if source.kind == MediaSourceKind.url:
            parsed = parse_data_url(source.data)
            if parsed is None:
                return {"fileData": {"mimeType": block.media_type, "fileUri": source.data}}
            return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
        data = source.data
        if source.kind == MediaSourceKind.file_ref:
            data = workspace_file_base64(data, self.options.workspace, max_bytes=self.options.max_media_bytes)
        return {"inlineData": {"mimeType": block.media_type, "data": data}}

    def _tool_message(self, message: Message, position: int, batch: list[tuple[int, dict[str, Any]]]) -> None:
        """Adds the message's functionResponse parts to `batch`, keyed by their call's order."""
        for index, block in enumerate(message.content):
            if not isinstance(block, ToolResultBlock):
                self.losses.block(
                    message, index, block.type, "a tool message carries only tool_result blocks"
                )
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
            if isinstance(inner, ImageBlock | DocumentBlock):
                part = self._media(inner, message, index)
                if part is not None:
                    media.append(part)
            elif not isinstance(inner, TextBlock):
                self.losses.lost(
                    message,
                    inner.type,
                    "a functionResponse carries text and media only",
                    at=f"tool result #{index} of message {message.id}",
                    whole=True,
                )
        if media:
            response["parts"] = media
        return response

    # model messages

    def _model_parts(self, message: Message) -> tuple[list[dict[str, Any]], bool]:
        """The parts of an assistant message, and whether they replay our own turn exactly
        (`own`: this adapter wrote the message's replay data, for this endpoint kind)."""
        raw = own_raw(message, NAME)
        own = raw.get("endpoint") == ENDPOINT_KIND and replays_opaque(message, NAME, self.options)
        replay = _replay(raw if own else {})
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
        return parts or _empty_turn(message), own

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
        if isinstance(block, ServerToolUseBlock | ServerToolResultBlock):
            return _server_part(block, message, index, self.losses)
        reason = (
            "gemini has no redacted thinking; the blob is another provider's"
            if isinstance(block, RedactedThinkingBlock)
            else "not allowed in an assistant message"
        )
        self.losses.block(message, index, block.type, reason)
        return None

    def _thinking(
        self, block: ThinkingBlock, message: Message, index: int, *, own: bool
    ) -> dict[str, Any] | None:
        if not own:
            reason = (
                f"thinking from {produced_at(message)} cannot be replayed to {sent_to(NAME, self.options)}"
                if not replays_opaque(message, NAME, self.options)
                else "gemini thinking without replay data for this endpoint"
            )
            self.losses.block(message, index, "thinking", reason)
            return None
        if not self.caps.supports_thinking:
            self.losses.block(message, index, "thinking", f"{self.options.model} does not support thinking")
            return None
        part: dict[str, Any] = {"text": block.text, "thought": True}
        if block.signature is not None:
            part["thoughtSignature"] = block.signature
        return part


def _server_part(
    block: ServerToolUseBlock | ServerToolResultBlock, message: Message, index: int, losses: Losses
) -> dict[str, Any] | None:
    """Gemini's own code execution, back as the part it came in: server_tool_use ->
    `executableCode`, server_tool_result -> `codeExecutionResult` (its kept outcome, else one
    from is_error). Ids metis made up for parts Gemini sent without one are not sent. Another
    provider's server tools (and any other Gemini server tool) ran elsewhere: dropped."""
    if block.provider != NAME or block.name != CODE_EXECUTION:
        losses.block(
            message, index, block.type, f"a {block.provider} {block.name} call ran there, not on gemini"
        )
        return None
    if isinstance(block, ServerToolUseBlock):
        code = dict(block.input)
        if not block.id.startswith(UNNAMED_CALL):
            code["id"] = block.id
        return {"executableCode": code}
    result: dict[str, Any] = dict(block.provider_data or {})
    result.setdefault("outcome", "OUTCOME_FAILED" if block.is_error else "OUTCOME_OK")
    output = "".join(inner.text for inner in block.content if isinstance(inner, TextBlock))
    if output:
        result["output"] = output
    if not block.tool_use_id.startswith(UNNAMED_CALL):
        result["id"] = block.tool_use_id
    return {"codeExecutionResult": result}


def _empty_turn(message: Message) -> list[dict[str, Any]]:
    """The parts of a turn whose only text is empty: one empty text part, so the turn stays in
    place (Gemini refuses a content without parts, and takes `{"text": ""}`); a message with
    nothing writable at all is left out as before."""
    if any(isinstance(block, TextBlock) for block in message.content):
        return [{"text": ""}]
    return []


def _order(item: tuple[int, dict[str, Any]]) -> int:
    return item[0]


def _signature_map(items: list[tuple[int, str]], message: Message) -> dict[int, str]:
    """Block index -> signature, kept only where the block still fits (a text or a call)."""
    content = message.content
    return {
        index: signature
        for index, signature in items
        if 0 <= index < len(content)
        and isinstance(content[index], TextBlock | ToolUseBlock | ServerToolUseBlock | ServerToolResultBlock)
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


__all__ = ["SNAKE_CASE", "TOOLS_FORM", "declaration", "write_request"]
