"""A recorded generateContent request body (camelCase or snake_case) -> canonical messages,
tools and options (`WireImport`).

The body is checked once against the declared `GenerateContentRequest`; what follows only maps.
Model turns are folded by the same `PartFolder` responses use, so an imported turn replays to
Gemini exactly. Function responses are paired with the previous model turn's calls by id when
both carry one, else by name in order. Nothing read is lost silently: canonical options are
taken out of the request's option fields (`options`), and what they leave (`safetySettings`,
`generationConfig.topK`, ...) is Gemini's own, `options.provider_options["gemini"]`; parts
with no canonical form are `WireImport.dropped`. Built-in tools (`googleSearch`,
`codeExecution`, `urlContext`, ...) are canonical provider tools (`provider_tools`), each
remembering the Tool object it shared with others so the writer groups them again.

A turn of nothing but empty text keeps its place as one empty text block (elsewhere an empty
text part carries nothing and is a recorded drop). Media parts become the block their media type
names (image, audio, video, else document). Tool schemas in `parameters` are converted to JSON
Schema, and a `parametersJsonSchema` is kept and marked so it replays as such; a `parameters`
schema the canonical one would not write back as it came is kept verbatim beside it, replayed
while the tool is unedited (`schema.py`). A request whose `tools` are spelled in snake_case
(`function_declarations`) or given as one object instead of a list records that on each of
its tools (`provider_data["gemini"]["request_tools"]`), so the writer spells them so again.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, cast

from metis_schema.v3 import (
    AudioBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaSourceKind,
    Role,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    VideoBlock,
)
from pydantic import Field, TypeAdapter, ValidationError

from ...assembly import RequestContext, StreamAssembler, import_context, imported_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from ...validation import pydantic_problems
from .._kit.base import AdapterOptions, WireImport
from .._kit.importing import ImportedMessages, imported_tool, resolve_import_model
from .._kit.losses import Losses
from .._kit.options import at, imported_options, option_fields, take
from .._kit.provider_tools import ROWS, read_tool
from .._kit.reader import read
from .._kit.tool_fields import with_provider_data
from .declarations import JSON_SCHEMA_FIELD, to_json_schema, with_recorded_parameters
from .facts import DEFAULT_IMPORT_MODEL, ENDPOINT_KIND, FACTS, NAME
from .from_wire import PartFolder
from .to_wire import INCLUDE_THOUGHTS, SNAKE_CASE, SPELLING, TOOLS_FORM, snake_case
from .to_wire import declaration as declaration_of
from .wire import (
    DECLARATION_FIELDS,
    Content,
    FunctionDeclaration,
    FunctionResponse,
    GenerateContentRequest,
    Part,
    Tool,
)

_CONTENT = frozenset({"contents", "systemInstruction", "tools"})
"""Top-level request fields the import maps as content (validated under camelCase names);
every other one is an option."""

_ROLES: dict[str, Role] = {"user": Role.user, "model": Role.assistant, "function": Role.user}
"""Wire role -> canonical role (`function` is the pre-2024 role of function responses)."""

_MEDIA_BLOCKS = {"image": "image", "audio": "audio", "video": "video"}
"""The top-level media type -> the canonical block; any other (application/pdf, text/...) is a document."""
FILE_API_URI = re.compile(r"^https://generativelanguage\.googleapis\.com/[\w.-]+/files/[^/?#]+$")
"""The `uri` of a file Gemini's File API holds (what `files.upload` answers): a gemini file id."""
_MEDIA: TypeAdapter[ImageBlock | AudioBlock | VideoBlock | DocumentBlock] = TypeAdapter(
    Annotated[ImageBlock | AudioBlock | VideoBlock | DocumentBlock, Field(discriminator="type")]
)

_MODEL_NAME = re.compile(r"^(?:models/)?(?P<name>[^/:]+)$")

_Call = tuple[str, str, str | None]
"""(canonical id, name, Gemini id) of a call in the previous model turn."""


def import_request(
    body: Any, *, session_id: str, tool_ids: ToolIdMap, model: str | None = None
) -> WireImport:
    """A recorded request body -> canonical messages, tools and options.

    The model is not in a Gemini body (it is in the URL): pass `model`, else a `model` key in
    the body is used, else DEFAULT_IMPORT_MODEL.
    """
    request = read(GenerateContentRequest, body, provider=NAME, what="request")
    named = model or _import_model(request.get("model")) or DEFAULT_IMPORT_MODEL
    context = import_context(
        provider=NAME, session_id=session_id, model=resolve_import_model(named, NAME), tool_ids=tool_ids
    )
    return _Importer(context).run(request, body.get("tools"), _spelling(body))


def _import_model(value: str | None) -> str | None:
    """`models/gemini-2.5-flash` (or a bare name) -> `gemini:gemini-2.5-flash`."""
    match = _MODEL_NAME.match(value) if value else None
    return f"{NAME}:{match['name']}" if match else None


class _Importer:
    """Reads one validated request into canonical form (see the module docstring)."""

    def __init__(self, context: RequestContext) -> None:
        self.context = context
        self.session_id = context.session_id
        self.imported = ImportedMessages(context.session_id, NAME)
        """The messages read, with their paths (`WireImport.paths`)."""
        self.losses = Losses(NAME, context.session_id)
        self.pending: list[_Call] = []  # calls of the last model turn
        self.pending_at = -1

    def run(self, request: GenerateContentRequest, raw_tools: Any, spelling: dict[str, Any]) -> WireImport:
        """`raw_tools`: the body's `tools` as sent, before validation renamed and retyped it
        (what `_tools` keeps verbatim and reads the spelling of); `spelling`: how the rest of
        the body was spelled (`to_wire.SPELLING`), kept as a directive."""
        system = request.get("systemInstruction")
        if system is not None:
            self._system(system)
        for i, content in enumerate(request["contents"]):
            self._content(content, i)
        tools = self._tools(request.get("tools") or [], _listed(raw_tools))
        form = _tools_form(raw_tools)
        if form:
            tools = [with_provider_data(tool, NAME, {TOOLS_FORM: form}) for tool in tools]
        return WireImport(
            messages=self.imported.messages,
            tools=tools,
            options=self._options(request, spelling),
            dropped=self.losses.dropped,
            paths=self.imported.paths,
        )

    # messages

    def _add(self, role: Role, content: list[ContentBlock], path: str, **metadata: Any) -> None:
        """A USER, SYSTEM or TOOL message read from `path`, as the import's next."""
        self.imported.add(self.imported.new(role, content, path, **metadata), path)

    def _system(self, system: str | Content) -> None:
        texts: list[str] = []
        if isinstance(system, str):
            texts.append(system)
        else:
            for j, part in enumerate(system.get("parts") or []):
                text = part.get("text")
                if text is None:
                    self.losses.imported(
                        f"systemInstruction.parts[{j}]", part, "a system instruction carries text only"
                    )
                elif text:
                    texts.append(text)
        self._add(Role.system, [TextBlock(type="text", text=t) for t in texts], "systemInstruction")

    def _content(self, content: Content, i: int) -> None:
        path = f"contents[{i}]"
        role_name = content.get("role") or "user"
        role = _ROLES.get(role_name)
        if role is None:
            raise WireFormatError(
                f"unknown role {role_name!r} (expected user or model)", provider=NAME, path=path + ".role"
            )
        parts = content.get("parts") or []
        if role == Role.assistant:
            self._model(parts, path, i)
        else:
            self._user(parts, path, i)

    def _model(self, parts: list[Part], path: str, i: int) -> None:
        folder = PartFolder(self.context)
        assembler = StreamAssembler(self.context, NAME)
        assembler.feed_all(folder.fold_all(parts, path))
        content = assembler.content(final=True)
        self.pending, self.pending_at = list(folder.calls), i
        if not content and any(_empty_text(part) for part in parts):
            # a model turn of empty text (a signature-only part is one): an empty text block
            # keeps the turn; to_wire writes it only when the turn has no other part to send
            content = [TextBlock(type="text", text="")]
        if not content:
            self.losses.imported(
                path, {"role": "model", "parts": parts}, "a model turn with no canonical block"
            )
            return
        raw: dict[str, Any] = {"adapter": NAME, "endpoint": ENDPOINT_KIND, "imported": True}
        raw.update(folder.replay_raw())
        if assembler.unparsed_arguments:
            raw["unparsed_arguments"] = dict(assembler.unparsed_arguments)
        self.imported.add(
            imported_assistant(self.context, provider=NAME, content=content, provider_raw=raw), path
        )

    def _user(self, parts: list[Part], path: str, i: int) -> None:
        blocks: list[ContentBlock] = []
        kept: list[tuple[int, dict[str, Any]]] = []  # (block index, the part's further fields)
        responses: list[tuple[int, FunctionResponse]] = []
        if parts and all(_empty_text(part) for part in parts):
            # the turn is there, with nothing in it: an empty text block keeps it in place, so
            # the replay keeps the recorded turns (user first, model after) instead of losing one
            self._add(Role.user, [TextBlock(type="text", text="")], path)
            self.pending = []
            return
        for j, part in enumerate(parts):
            response = part.get("functionResponse")
            if response is not None:
                if blocks:  # the blocks before it are a message, with their own part fields
                    self._add(Role.user, blocks, path, **_kept_fields(kept))
                    blocks, kept = [], []
                responses.append((j, response))
                continue
            if responses:
                self._tool_messages(responses, path, i)
                responses = []
            block = self._user_block(part, f"{path}.parts[{j}]")
            if block is not None:
                further = self._part_fields(part, f"{path}.parts[{j}]")
                if further:
                    kept.append((len(blocks), further))
                blocks.append(block)
        if responses:
            self._tool_messages(responses, path, i)
        if blocks:
            self._add(Role.user, blocks, path, **_kept_fields(kept))
        self.pending = []  # calls not answered by this turn stay unanswered

    def _part_fields(self, part: Part, where: str) -> dict[str, Any]:
        """The fields of a user part beside the one its block was made from (`videoMetadata`,
        `mediaResolution`, ...): no canonical block has a place for them, so each is listed
        as dropped (WARN) for any other provider, and kept in the message's provider_raw
        (`part_fields`), which the writer puts back on the part for Gemini (as Anthropic's
        importer keeps its unknown blocks)."""
        fields = cast(dict[str, Any], part)
        further = {
            key: value for key, value in fields.items() if key not in _BLOCK_KEYS and value is not None
        }
        for key, value in further.items():
            self.losses.imported(
                f"{where}.{key}",
                value,
                "a Gemini part field with no canonical place; replayed to Gemini only",
            )
        return further

    def _user_block(self, part: Part, where: str) -> ContentBlock | None:
        if part.get("functionCall") is not None:
            raise WireFormatError("functionCall in a user turn", provider=NAME, path=where + ".functionCall")
        text = part.get("text")
        if text is not None and not part.get("thought"):
            if not text:
                self.losses.imported(where, part, "an empty text part beside other parts carries nothing")
                return None
            return TextBlock(type="text", text=text)
        inline = part.get("inlineData")
        if inline is not None:
            return self._media(
                inline.get("mimeType"), inline.get("data"), MediaSourceKind.base64, part, where
            )
        file_data = part.get("fileData")
        if file_data is not None:
            uri = file_data.get("fileUri")
            kind = MediaSourceKind.file_id if uri and FILE_API_URI.match(uri) else MediaSourceKind.url
            return self._media(file_data.get("mimeType"), uri, kind, part, where)
        if part:
            self.losses.imported(where, part, "no canonical block for this part")
        return None

    def _media(
        self, mime: str | None, data: str | None, kind: MediaSourceKind, part: Part, where: str
    ) -> ContentBlock | None:
        """A media part -> the block its media type names (image, audio, video, else document).
        A `fileData` URI of Gemini's File API is a gemini `file_id` source: only Gemini can
        read it (its files need the caller's key), so every other adapter drops it with the
        §7.3 WARN instead of handing another provider a URL it cannot fetch; the writer
        sends it back as the `fileUri` it came as. Any other URI is a `url` source."""
        if not mime:
            self.losses.imported(where, part, "a media part without a mimeType")
            return None
        if not data:
            self.losses.imported(where, part, "a media part without data")
            return None
        source: dict[str, Any] = {"kind": kind, "data": data}
        if kind == MediaSourceKind.file_id:
            source["provider"] = NAME
        block_type = _MEDIA_BLOCKS.get(mime.split("/", 1)[0], "document")
        try:
            return _MEDIA.validate_python({"type": block_type, "source": source, "media_type": mime})
        except ValidationError as exc:
            raise WireFormatError(
                f"invalid {block_type} part: {pydantic_problems(exc)[0]}", provider=NAME, path=where
            ) from None

    def _tool_messages(self, responses: list[tuple[int, FunctionResponse]], path: str, i: int) -> None:
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

    def _tool_message(self, canonical: str, response: FunctionResponse, where: str) -> None:
        text, is_error = _result_content(response.get("response") or {})
        content: list[ContentBlock] = [TextBlock(type="text", text=text)] if text else []
        for k, part in enumerate(response.get("parts") or []):
            at = f"{where}.parts[{k}]"
            block = self._user_block(part, at)
            if isinstance(block, ImageBlock | DocumentBlock):
                content.append(block)
            elif block is not None:
                self.losses.imported(
                    at, part, f"a tool result holds text, images and documents, not {block.type}"
                )
        result = ToolResultBlock(
            type="tool_result", tool_use_id=canonical, content=content, is_error=is_error
        )
        self._add(Role.tool, [result], where, parent_tool_use_id=canonical)

    # tools and options

    def _tools(self, tools: list[Tool], raw: list[Any]) -> list[ToolDefinition]:
        out: list[ToolDefinition] = []
        taken: set[str] = set()
        for t, tool in enumerate(tools):
            raw_declarations = _listed(_function_declarations(raw[t]))
            # Several tools in one Tool object: remember which, so they replay together.
            shared = (
                {"object": t, "with_functions": "functionDeclarations" in tool} if len(tool) > 1 else None
            )
            for key, value in tool.items():
                if key != "functionDeclarations":
                    wire = {key: value}
                    path = f"tools[{t}].{key}"
                    out.append(read_tool(ROWS[NAME], wire, path=path, taken=taken, extra=shared))
                    continue
                for d, declaration in enumerate(tool.get("functionDeclarations") or []):
                    where = f"tools[{t}].functionDeclarations[{d}]"
                    out.append(self._declaration(declaration, raw_declarations[d], where))
                    taken.add(out[-1].name)
                    for name, extra in declaration.items():
                        if name not in DECLARATION_FIELDS:
                            self.losses.imported(
                                f"{where}.{name}", extra, "no canonical place for this declaration field"
                            )
        return out

    def _declaration(self, declaration: FunctionDeclaration, raw: Any, where: str) -> ToolDefinition:
        """One functionDeclaration: a `parameters` schema converted to JSON Schema (and kept
        as sent, `raw`, when the writer would not give it back so), or a `parametersJsonSchema`
        kept as it is and recorded as such, so it replays in that field (`schema.py`)."""
        parameters = declaration.get("parameters")
        json_schema = declaration.get("parametersJsonSchema")
        schema: dict[str, Any] | None = json_schema
        if parameters is not None:
            schema = to_json_schema(
                parameters, f"{where}.parameters", lambda value, at, why: self.losses.imported(at, value, why)
            )
            if json_schema is not None:
                why = "a declaration has one schema: parameters is kept"
                self.losses.imported(f"{where}.parametersJsonSchema", json_schema, why)
        tool = imported_tool(
            declaration["name"], declaration.get("description"), schema, provider=NAME, path=where
        )
        if parameters is None and json_schema is not None:
            tool = with_provider_data(tool, NAME, {"schema_field": JSON_SCHEMA_FIELD})
        sent = raw.get("parameters") if isinstance(raw, dict) else None
        if parameters is not None and declaration_of(tool).get("parameters") != sent:
            tool = with_recorded_parameters(tool, sent)
        return tool

    def _options(self, request: GenerateContentRequest, spelling: dict[str, Any]) -> AdapterOptions:
        """Canonical options taken out of the option fields by the one rule
        (`options.imported_options`, declared ones under their camelCase names); the rest is
        Gemini's own, with the body's `spelling` directive. Whether it streamed is in the
        URL, not the body: an imported request is not a stream."""
        return imported_options(
            request,
            option_fields(request, _CONTENT),
            FACTS,
            model=self.context.model,
            session_id=self.session_id,
            tool_ids=self.context.tool_ids,
            directives={SPELLING: spelling} if spelling else {},
            stream=False,
            read=_derived_thoughts,
        )


def _derived_thoughts(fields: dict[str, Any], found: dict[str, Any]) -> None:
    """`includeThoughts` where it is what the writer derives from the thinking budget found
    (thoughts shown whenever thinking is on) is taken out: the writer says it again."""
    budget = found.get("thinking_budget")
    if budget is not None and at(fields, INCLUDE_THOUGHTS) == (budget != 0):
        take(fields, INCLUDE_THOUGHTS)


_PART_KINDS = (
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "executableCode",
    "codeExecutionResult",
    "videoMetadata",
    "thoughtSignature",
)
"""Part fields whose name has two spellings; the first a part has names its kind."""
_SNAKE_PART_KINDS = tuple((kind, *snake_case({kind: None})) for kind in _PART_KINDS)
"""(kind, its snake_case spelling) of each `_PART_KINDS` field, spelled once, not per part."""


def _spelling(body: Any) -> dict[str, Any]:
    """How `body` was spelled where this writer spells it otherwise (`to_wire.SPELLING`):
    top-level fields and parts in snake_case, contents without a role, the role a system
    instruction named. Empty for a body spelled as the writer spells it."""
    out: dict[str, Any] = {}
    snake = [key for key in ("system_instruction", "tool_config", "generation_config") if key in body]
    if snake:
        out["snake_case"] = snake
    parts: list[list[Any]] = []
    roleless: list[int] = []
    for i, content in enumerate(body.get("contents") or ()):
        if not isinstance(content, dict):
            continue
        if "role" not in content:
            roleless.append(i)
        for j, part in enumerate(content.get("parts") or ()):
            if not isinstance(part, dict):
                continue
            spelled = [kind for kind, snake in _SNAKE_PART_KINDS if snake in part]
            if spelled:
                parts.append([i, j, spelled[0]])
    if parts:
        out["parts"] = parts
    if roleless:
        out["roleless"] = roleless
    system = body.get("systemInstruction", body.get("system_instruction"))
    if isinstance(system, dict) and isinstance(system.get("role"), str):
        out["system_role"] = system["role"]
    return out


def _listed(value: Any) -> list[Any]:
    """A raw array, or the one object Gemini reads as a one-element array (`wire.Many`)."""
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _function_declarations(raw: Any) -> Any:
    """A raw Tool object's declarations under either spelling (camelCase wins, as in `wire`)."""
    if not isinstance(raw, dict):
        return None
    return raw.get("functionDeclarations", raw.get("function_declarations"))


def _tools_form(raw: Any) -> dict[str, str]:
    """How a request spelled its `tools`, where the writer's camelCase list would differ:
    `shape: object` for one Tool object in place of the list, `spelling: snake_case` when its
    function fields are snake_case only (`to_wire.SNAKE_CASE`)."""
    form: dict[str, str] = {}
    if isinstance(raw, dict):
        form["shape"] = "object"
    keys: set[str] = set()
    for tool in _listed(raw):
        if isinstance(tool, dict):
            keys.update(tool)
            keys.update(k for d in _listed(_function_declarations(tool)) if isinstance(d, dict) for k in d)
    if keys & set(SNAKE_CASE.values()) and not keys & set(SNAKE_CASE):
        form["spelling"] = "snake_case"
    return form


_BLOCK_KEYS = frozenset({"text", "inlineData", "fileData"})
"""The user part fields a canonical block is made from (the rest: `_Importer._part_fields`)."""


def _kept_fields(kept: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The message metadata keeping a user turn's further part fields, if it has any."""
    if not kept:
        return {}
    raw = {"adapter": NAME, "part_fields": [[index, fields] for index, fields in kept]}
    return {"provider": NAME, "provider_raw": raw}


def _empty_text(part: Part) -> bool:
    """An empty, non-thought text part (a thoughtSignature may ride on it)."""
    return part.get("text") == "" and not part.get("thought") and set(part) <= {"text", "thoughtSignature"}


def _match_call(free: list[_Call], response: FunctionResponse, where: str) -> _Call:
    name = response.get("name")
    provider_id = response.get("id")
    if provider_id:
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


def _result_content(response: dict[str, Any]) -> tuple[str, bool]:
    """functionResponse.response -> (result text, is_error): the inverse of to_wire's `_result_object`."""
    is_error = "error" in response
    key = "error" if is_error else "output"
    if set(response) == {key} and isinstance(response[key], str):
        return response[key], is_error
    return json.dumps(response, ensure_ascii=False), is_error


__all__ = ["import_request"]
