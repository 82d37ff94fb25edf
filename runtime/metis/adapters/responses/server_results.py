"""A built-in tool call item (`web_search_call`, `file_search_call`, `code_interpreter_call`,
`image_generation_call`, `mcp_call`) -> the call's input and the v2 server_tool_result of
what it returned.

The Responses API puts a built-in tool's call and its result in ONE item; canonical v2 has
a block for each, so another provider, an export or `metis show` can read what the tool
returned. The result block's `content` is what metis can show of it (shapes from
openai-python `types/responses`):

- web_search_call: `action.sources` (present when the request asks
  `include: ["web_search_call.action.sources"]`) -> search_result blocks sourced and
  titled by URL (a source has no title or text: its URL stands for both, as Anthropic's
  encrypted results are shown by title); an API source with only a `name` -> a text block;
- file_search_call: `results` -> search_result blocks (file id, filename, retrieved text);
- code_interpreter_call: `outputs` -> `logs` as text blocks, `image` as url image blocks;
- image_generation_call: `result` (base64) -> an image block (`output_format`, else PNG,
  the API's default);
- mcp_call: `output` and `error` -> text blocks;
- mcp_list_tools: `tools` -> a text block per tool (`name: description`), `error` -> is_error;
- tool_search_output: `tools` -> a text block per loaded tool (a namespace names its tools);
- mcp_approval_response: `approve` (and `reason`) -> a text block saying the decision.

A field that is absent or null means the item carries no result (a search whose sources
were not asked for, a call announced but not done): the call alone. A status of `failed`
or `incomplete`, or an MCP `error`, makes the result `is_error` (a text saying so when the
item holds nothing else). Replay is unaffected: the item itself, kept whole, goes back.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import ServerToolResultBlock
from pydantic import ValidationError

from ... import _json
from ...errors import WireFormatError
from ...validation import pydantic_problems
from .._kit.images import url_image_media_type
from .facts import PROVIDER
from .wire import ServerCallItem

FAILED = frozenset({"failed", "incomplete"})
RESULT_FIELDS = frozenset({"results", "outputs", "result", "output", "error", "tools"})
"""Item fields that hold what the tool returned: not part of the call's input."""
_NOT_INPUT = RESULT_FIELDS | {"type", "id", "status"}
_IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "webp": "image/webp"}

_validate_result = ServerToolResultBlock.__pydantic_validator__.validate_python


def call_input(item: ServerCallItem) -> dict[str, Any]:
    """The call's arguments: a web search's `action` without its sources (those are the
    result), a tool search's `arguments`, else the item's fields that are neither its
    identity nor its result."""
    if item["type"] == "tool_search_call":
        arguments = item.get("arguments")
        return arguments if isinstance(arguments, dict) else {"arguments": arguments}
    action = item.get("action")
    if action is not None:
        return {k: v for k, v in action.items() if k != "sources"}
    return {k: v for k, v in item.items() if k not in _NOT_INPUT and v is not None}


def server_result(
    item: ServerCallItem, name: str, path: str, *, answers: str | None = None
) -> ServerToolResultBlock | None:
    """The server_tool_result of `item` (see module doc), or None when it carries none;
    `answers`: the id of the call it answers when that is another item (else the item's)."""
    content = _content(item)
    status = item.get("status")
    failed = status in FAILED or item.get("error") is not None
    if content is None and not failed:
        return None
    if not content and failed:
        content = [_text(f"{item['type']} {status or 'failed'}")]
    fields: dict[str, Any] = {
        "type": "server_tool_result",
        "tool_use_id": answers or item["id"],
        "provider": PROVIDER,
        "name": name,
        "content": content or [],
    }
    if failed:
        fields["is_error"] = True
    try:
        block: ServerToolResultBlock = _validate_result(fields)
    except ValidationError as exc:
        raise WireFormatError(
            f"the result of a {item['type']} cannot be read: {pydantic_problems(exc)[0]}",
            provider=PROVIDER,
            path=path,
        ) from None
    return block


def _content(item: ServerCallItem) -> list[dict[str, Any]] | None:
    kind = item["type"]
    if kind == "web_search_call":
        sources = (item.get("action") or {}).get("sources")
        if sources is None:
            return None
        found = []
        for source in sources:
            if source.get("url"):
                found.append(_search_result(source["url"], source["url"], source["url"]))
            elif source.get("name"):
                found.append(_text(source["name"]))
        return found
    if kind == "file_search_call":
        results = item.get("results")
        if results is None:
            return None
        return [
            _search_result(
                r.get("file_id") or r.get("filename") or "file",
                r.get("filename") or r.get("file_id") or "",
                r.get("text") or r.get("filename") or r.get("file_id") or "file",
            )
            for r in results
        ]
    if kind == "code_interpreter_call":
        outputs = item.get("outputs")
        if outputs is None:
            return None
        found = []
        for output in outputs:
            if output["type"] == "logs" and output.get("logs"):
                found.append(_text(output["logs"]))
            elif output["type"] == "image" and output.get("url"):
                url = output["url"]
                located = {"kind": "url", "data": url}
                found.append({"type": "image", "source": located, "media_type": url_image_media_type(url)})
        return found
    if kind == "image_generation_call":
        result = item.get("result")
        if not result:
            return None
        fmt = str(item.get("output_format") or "png").lower()
        media_type = _IMAGE_FORMATS.get(fmt, f"image/{fmt}")
        return [{"type": "image", "source": {"kind": "base64", "data": result}, "media_type": media_type}]
    if kind in ("mcp_list_tools", "tool_search_output"):
        tools = item.get("tools")
        return None if tools is None else [_text(_tool_line(t)) for t in tools]
    if kind == "mcp_approval_response":
        decision = "approved" if item.get("approve") else "denied"
        reason = item.get("reason")
        return [_text(f"{decision}: {reason}" if reason else decision)]
    if kind == "mcp_call":
        found = []
        if item.get("output"):
            found.append(_text(str(item["output"])))
        if item.get("error") is not None:
            found.append(_text(_error_text(item["error"])))
        return found or None
    return None


def _tool_line(tool: dict[str, Any]) -> str:
    """One listed or loaded tool as a line: its name (a namespace's, with its tools), and
    its description when it has one."""
    name = str(tool.get("name") or tool.get("server_label") or tool.get("type") or "tool")
    inner = tool.get("tools")
    if isinstance(inner, list) and inner:
        name += " (" + ", ".join(str(t.get("name")) for t in inner if isinstance(t, dict)) + ")"
    description = tool.get("description")
    return f"{name}: {description}" if description else name


def _error_text(error: Any) -> str:
    """An MCP error: a string, or an object with a `message` (protocol and HTTP errors) or
    a `content` (a tool execution error), shown as JSON when it has neither."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        if isinstance(error.get("message"), str):
            return str(error["message"])
        if error.get("content") is not None:
            error = error["content"]
    return _json.dumps(error).decode()


def _search_result(source: str, title: str, text: str) -> dict[str, Any]:
    return {"type": "search_result", "source": source, "title": title, "content": [_text(text)]}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


__all__ = ["FAILED", "RESULT_FIELDS", "call_input", "server_result"]
