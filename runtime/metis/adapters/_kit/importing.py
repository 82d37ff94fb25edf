"""What every importer (and reply reader) shares: the model a recorded request names,
imported tool definitions, the function-tool shape of the OpenAI family, canonical
blocks built from provider values, and the messages an import reads (`ImportedMessages`).

A wire tool carries no side-effect declaration, so an imported ToolDefinition assumes the
broadest one (`execute`) rather than inventing safety."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from metis_schema.v3 import (
    ContentBlock,
    Message,
    Role,
    SideEffects,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ...assembly import imported_message
from ...catalog import load_catalog
from ...errors import MetisError, WireFormatError
from .losses import Losses
from .options import SPELLED


def function_tool(tool: ToolDefinition) -> dict[str, Any]:
    """A ToolDefinition in the OpenAI/OpenRouter/Ollama function-tool shape."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def imported_tool(name: Any, description: Any, schema: Any, *, provider: str, path: str) -> ToolDefinition:
    """A ToolDefinition from a recorded wire tool (side effects unknown: assume `execute`)."""
    if not isinstance(name, str) or not name:
        raise WireFormatError("tool has no name", provider=provider, path=path)
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        raise WireFormatError("tool parameters must be a JSON object", provider=provider, path=path)
    try:
        return ToolDefinition(
            name=name,
            description=description if isinstance(description, str) else "",
            input_schema=schema,
            side_effects=SideEffects.execute,
        )
    except ValueError as exc:
        raise WireFormatError(
            f"tool {name!r} cannot be imported: {exc}", provider=provider, path=path
        ) from exc


def system_role(roles: Sequence[str], losses: Losses) -> dict[str, Any]:
    """The `system_role` directive of an OpenAI-family import (Chat, Responses), from the
    roles its system messages were sent with, in order: `developer` when the first was
    (the writers' default is `system`). One role replays for all, so a request that mixes
    the two says so once, as a loss of the request."""
    if len(set(roles)) > 1:
        losses.request("system_role", f"request mixes system and developer roles; all replay as {roles[0]}")
    return {"system_role": "developer"} if roles and roles[0] == "developer" else {}


def import_model(body: Mapping[str, Any], provider: str) -> str:
    """The canonical model id a recorded request names: its `model`, at `provider`.

    Every importer needs one (each imported assistant turn records it); a request without
    a model, or with one the catalog cannot resolve, is a WireFormatError at `model`.
    """
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise WireFormatError("request has no model", provider=provider, path="model")
    return resolve_import_model(f"{provider}:{model}", provider)


def resolve_import_model(model: str, provider: str) -> str:
    """The catalog id of the model a recorded request was sent to (`import_model`, or one
    the caller names when the body has none); a WireFormatError at `model` when unknown."""
    try:
        return load_catalog().resolve(model).id
    except MetisError as exc:
        raise WireFormatError(
            f"model {model!r} cannot be resolved: {exc}", provider=provider, path="model", raw=model[:200]
        ) from exc


# Blocks made from provider values are validated by the models' own pydantic-core
# validators, called on a dict: the same validation `TextBlock(...)` runs, without
# BaseModel.__init__'s Python-level frame and keyword packing, which every block of every
# reply would otherwise pay.
validate_text = TextBlock.__pydantic_validator__.validate_python
validate_tool_use = ToolUseBlock.__pydantic_validator__.validate_python
validate_thinking = ThinkingBlock.__pydantic_validator__.validate_python
validate_tool_result = ToolResultBlock.__pydantic_validator__.validate_python


def text_block(text: str) -> TextBlock:
    """`TextBlock(type="text", text=text)`, validated by `validate_text`."""
    block: TextBlock = validate_text({"type": "text", "text": text})
    return block


def tool_use_block(tool_id: str, name: str, value: dict[str, Any]) -> ToolUseBlock:
    """`ToolUseBlock(type="tool_use", id=..., name=..., input=...)`, validated."""
    block: ToolUseBlock = validate_tool_use({"type": "tool_use", "id": tool_id, "name": name, "input": value})
    return block


def tool_result_block(tool_use_id: str, content: list[ContentBlock]) -> ToolResultBlock:
    """`ToolResultBlock(type="tool_result", tool_use_id=..., content=...)`, validated (the
    blocks of `content` are taken as they are: models are not validated again)."""
    block: ToolResultBlock = validate_tool_result(
        {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    )
    return block


def thinking_block(fields: dict[str, Any]) -> ThinkingBlock:
    """`ThinkingBlock(**fields)`, validated; the fields given are the fields set."""
    block: ThinkingBlock = validate_thinking(fields)
    return block


class ImportedMessages:
    """The messages of one import, as its importer reads them: each in order with the path
    of the body it was read from (`WireImport.paths`, kept in step by `add`), and, for a
    message sent otherwise than the writer would write it, how it was sent (the `SPELLED`
    directive, `spelling`). Every importer collects into one, so the three are kept the
    same way for every provider."""

    def __init__(self, session_id: str, provider: str) -> None:
        self.session_id = session_id
        self.provider = provider
        self.messages: list[Message] = []
        self.paths: list[str] = []
        self.spelled: dict[str, dict[str, Any]] = {}
        """Message id -> how it was sent: the `SPELLED` directive."""

    def new(
        self,
        role: Role,
        content: list[ContentBlock],
        path: str,
        shape: dict[str, Any] | None = None,
        *,
        created_at: datetime | None = None,
        **metadata: Any,
    ) -> Message:
        """A USER, SYSTEM or TOOL message read from `path` (`assembly.imported_message`: a
        WireFormatError there when it cannot be one), its `shape` recorded (`spell`); the
        importer `add`s it where it stands."""
        message = imported_message(
            self.session_id,
            role,
            content,
            provider=self.provider,
            path=path,
            created_at=created_at,
            metadata=metadata,
        )
        self.spell(message.id, shape)
        return message

    def spell(self, message_id: str, shape: dict[str, Any] | None) -> None:
        """How message `message_id` was sent, where that is not the writer's way (an empty
        or absent `shape` records nothing)."""
        if shape:
            self.spelled[message_id] = shape

    def add(self, message: Message, path: str) -> None:
        """`message`, read from `path` of the body, as the import's next."""
        self.messages.append(message)
        self.paths.append(path)

    def spelling(self) -> dict[str, Any]:
        """The `SPELLED` directive of the import's options (none when nothing was spelled
        otherwise)."""
        return {SPELLED: self.spelled} if self.spelled else {}
