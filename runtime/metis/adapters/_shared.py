"""Pieces of wire mapping that several adapters share, written once.

- images: base64 of an image block (file_refs read through `metis.media`, which keeps
  them inside the session workspace), base64 and data URLs;
- the function-tool shape `{"type": "function", "function": {name, description,
  parameters}}` used by OpenAI, OpenRouter and Ollama;
- imported tools: a wire tool carries no side-effect declaration, so an imported
  ToolDefinition assumes the broadest one (`execute`) rather than inventing safety;
- provider_raw ownership: an adapter reads only the provider_raw it wrote itself;
- opaque provenance: opaque provider state goes back only to the endpoint that made it.
- the `metis` directives an OpenAI-family adapter reads from its option fields.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from collections.abc import Mapping
from typing import Any, TypeGuard
from urllib.parse import urlparse

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    Message,
    SideEffects,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolUseBlock,
)

from ..catalog import load_catalog
from ..endpoints import normalize_endpoint
from ..errors import AdapterError, MetisError, WireFormatError
from ..invariants import BLOCK_CLASSES
from ..media import inline_base64
from . import get
from ._options import own_fields
from .base import AdapterOptions

_DATA_URL = re.compile(r"^data:(?P<media>[\w.+-]+/[\w.+-]+)(?:;[\w=.+-]+)*;base64,(?P<data>.*)$", re.DOTALL)


def image_base64(block: ImageBlock, options: AdapterOptions) -> str | None:
    """Base64 bytes of an image, reading file_refs from the workspace (contained and
    size-capped by `metis.media`); None for URL images."""
    return inline_base64(block, options.workspace, max_bytes=options.max_media_bytes)


def data_url(media_type: str, b64: str) -> str:
    """`data:<media>;base64,<data>`."""
    return f"data:{media_type};base64,{b64}"


def parse_data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a base64 data URL, or None for other URLs."""
    match = _DATA_URL.match(url)
    if match is None:
        return None
    data = match["data"]
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WireFormatError(f"data URL holds invalid base64: {exc}") from exc
    return match["media"], data


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


def own_raw(message: Message, adapter: str) -> dict[str, Any]:
    """The provider_raw `adapter` wrote on `message`, or {} (spec §6.5: only the writer reads it)."""
    raw = message.metadata.provider_raw
    if raw is not None and raw.get("adapter") == adapter and message.metadata.provider == adapter:
        return raw
    return {}


def replays_opaque(message: Message, provider: str, options: AdapterOptions) -> bool:
    """Whether `message`'s opaque state goes back in a request to `provider` at `options.endpoint`.

    Opaque state (thinking signatures, redacted thinking, encrypted reasoning, server-tool
    results, compaction data, Gemini thought signatures) verifies only where it was made.
    A proxy or compatible server at another base URL speaks the provider's wire format but
    cannot verify the provider's signatures, nor the provider its: so the test is the same
    provider AND the same endpoint (spec §4.3, §7.3). No recorded endpoint, and no target
    endpoint, both mean the provider's own default API. The one test every adapter asks.
    """
    metadata = message.metadata
    if metadata.provider != provider:
        return False
    recorded, target = metadata.endpoint, options.endpoint
    return recorded == target or _endpoint_key(provider, recorded) == _endpoint_key(provider, target)


def _endpoint_key(provider: str, url: str | None) -> str | None:
    """A normalized endpoint, None for the provider's default API (however it is spelled)."""
    if url is None:
        return None
    try:
        key = normalize_endpoint(url)
    except AdapterError:
        return url  # not a URL: equal only to itself, never to the default API
    return None if key == normalize_endpoint(get(provider).default_base_url) else key


def produced_at(message: Message) -> str:
    """Who produced `message`, for drop reasons: `anthropic at https://proxy.example.com/v1`,
    or `anthropic (its default API)`."""
    provider = message.metadata.provider or "an unknown provider"
    endpoint = message.metadata.endpoint
    return f"{provider} at {endpoint}" if endpoint else f"{provider} (its default API)"


def sent_to(provider: str, options: AdapterOptions) -> str:
    """Where this request goes, worded like `origin`."""
    return f"{provider} at {options.endpoint}" if options.endpoint else f"{provider} (its default API)"


def foreign_reasoning(message: Message, target_model: str, provider: str, options: AdapterOptions) -> str:
    """The drop reason for reasoning another model or endpoint produced (one wording for
    every adapter that replays reasoning to its own model only)."""
    source = message.metadata.model or "another model"
    return (
        f"reasoning from {source} via {produced_at(message)} goes back only to the model and "
        f"endpoint that produced it, not {target_model} via {sent_to(provider, options)}"
    )


# Blocks made from provider values are validated by the models' own pydantic-core
# validators, called on a dict: the same validation `TextBlock(...)` runs, without
# BaseModel.__init__'s Python-level frame and keyword packing, which every block of every
# reply would otherwise pay.
validate_text = TextBlock.__pydantic_validator__.validate_python
validate_tool_use = ToolUseBlock.__pydantic_validator__.validate_python
validate_thinking = ThinkingBlock.__pydantic_validator__.validate_python


def text_block(text: str) -> TextBlock:
    """`TextBlock(type="text", text=text)`, validated by `validate_text`."""
    block: TextBlock = validate_text({"type": "text", "text": text})
    return block


def tool_use_block(tool_id: str, name: str, value: dict[str, Any]) -> ToolUseBlock:
    """`ToolUseBlock(type="tool_use", id=..., name=..., input=...)`, validated."""
    block: ToolUseBlock = validate_tool_use({"type": "tool_use", "id": tool_id, "name": name, "input": value})
    return block


def thinking_block(fields: dict[str, Any]) -> ThinkingBlock:
    """`ThinkingBlock(**fields)`, validated; the fields given are the fields set."""
    block: ThinkingBlock = validate_thinking(fields)
    return block


def url_image_media_type(url: str) -> str:
    """The media type of an image given only by URL (the wire says none): guessed from the
    path's extension, else JPEG, the most common."""
    guessed = mimetypes.guess_type(urlparse(url).path)[0]
    return guessed if guessed and guessed.startswith("image/") else "image/jpeg"


_OTHER_BLOCKS: frozenset[type] = BLOCK_CLASSES - {ToolUseBlock}


def is_tool_use(block: ContentBlock) -> TypeGuard[ToolUseBlock]:
    """`isinstance(block, ToolUseBlock)`, paying for `isinstance` only on an unknown class.

    pydantic's model metaclass is an ABCMeta, so `isinstance` against a block class costs
    several times the identity test that settles every block of a validated message."""
    kind = type(block)
    return kind is ToolUseBlock or (kind not in _OTHER_BLOCKS and isinstance(block, ToolUseBlock))


DIRECTIVES = "metis"
"""The key of `AdapterOptions.extra` (and of a provider's `provider_options` entry, where an
import records how the request was shaped) holding directives to an adapter (never sent)."""
SYSTEM_ROLES = ("system", "developer")
"""How OpenAI-family wires may name the system role (`metis.system_role` picks one)."""


def split_directives(options: AdapterOptions, provider: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metis directives, the rest of the fields to merge into `provider`'s body), the
    directives' shared keys checked; the fields are `_options.own_fields` (this provider's
    `provider_options` entry, then `extra`; other providers' entries reported as dropped).

    Chat Completions and Responses read the same `metis` directives; each adapter checks
    the keys only it knows after this."""
    fields = own_fields(options, provider)
    directives = fields.pop(DIRECTIVES, None) or {}
    if not isinstance(directives, dict):
        raise WireFormatError(
            "options.extra['metis'] must be a dict of adapter directives", path="extra.metis"
        )
    role = directives.get("system_role", "system")
    if role not in SYSTEM_ROLES:
        raise WireFormatError(
            f"system_role must be 'system' or 'developer', not {role!r}", path="extra.metis.system_role"
        )
    return directives, fields


__all__ = [
    "DIRECTIVES",
    "SYSTEM_ROLES",
    "data_url",
    "foreign_reasoning",
    "function_tool",
    "image_base64",
    "import_model",
    "imported_tool",
    "is_tool_use",
    "own_raw",
    "parse_data_url",
    "produced_at",
    "replays_opaque",
    "resolve_import_model",
    "sent_to",
    "split_directives",
    "text_block",
    "thinking_block",
    "tool_use_block",
    "url_image_media_type",
    "validate_text",
    "validate_thinking",
    "validate_tool_use",
]
