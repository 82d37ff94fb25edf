"""The peers' ways of doing the benchmark's jobs: LiteLLM, Pydantic AI and LangChain, each
through the function it runs itself for that step (named in each `Contender`), from the
same data as metis (`bench._chat`). Everything a peer needs before the step (its own form
of the conversation, a model object, an SDK message type) is prepared here, untimed.

Importing this module imports the peers: they are installed by `nox -s bench` from
bench/peers.txt, into the bench's own virtualenv only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Coroutine
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # LiteLLM would fetch its price list

import httpx
from anthropic._models import construct_type
from anthropic.types import Message as AnthropicMessage
from anthropic.types.beta import BetaMessage
from langchain_anthropic import ChatAnthropic
from litellm.litellm_core_utils.prompt_templates.factory import anthropic_messages_pt
from litellm.llms.anthropic.chat.transformation import AnthropicConfig
from litellm.types.utils import ModelResponse as LiteLLMResponse
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from bench._chat import ANTHROPIC_MODEL, MAX_TOKENS, REPLY_BYTES, Shape, openai_messages, shape_of
from bench._common import T0
from bench._contender import Contender, ReplyShape

NO_KEY = "bench-no-key"
"""The SDK clients the peers build need a key; nothing here sends a request."""


def versions() -> dict[str, str]:
    """The installed version of each peer package (printed with the results)."""
    from importlib.metadata import version

    names = ("litellm", "pydantic-ai-slim", "langchain-anthropic", "langchain-core", "anthropic")
    return {name: version(name) for name in names}


# --- Pydantic AI ------------------------------------------------------------------------------


def pydantic_ai_messages(messages: list[dict[str, Any]]) -> list[ModelMessage]:
    """An OpenAI Chat conversation as Pydantic AI's message history: the system prompt and
    the user's text in requests, each assistant message a response, each run of tool
    results one request (Pydantic AI's own way of holding them)."""
    history: list[ModelMessage] = []
    names: dict[str, str] = {}
    pending: list[Any] = []

    def close_request() -> None:
        if pending:
            history.append(ModelRequest(parts=list(pending), timestamp=T0))
            pending.clear()

    for message in messages:
        role = message["role"]
        if role == "system":
            pending.append(SystemPromptPart(content=message["content"], timestamp=T0))
        elif role == "user":
            pending.append(UserPromptPart(content=message["content"], timestamp=T0))
        elif role == "tool":
            call = message["tool_call_id"]
            pending.append(
                ToolReturnPart(
                    tool_name=names[call], content=message["content"], tool_call_id=call, timestamp=T0
                )
            )
        else:
            close_request()
            parts: list[Any] = [TextPart(content=message["content"])] if message.get("content") else []
            for call in message.get("tool_calls") or ():
                names[call["id"]] = call["function"]["name"]
                parts.append(
                    ToolCallPart(
                        tool_name=call["function"]["name"],
                        args=call["function"]["arguments"],
                        tool_call_id=call["id"],
                    )
                )
            history.append(ModelResponse(parts=parts, model_name=ANTHROPIC_MODEL, timestamp=T0))
    close_request()
    return history


def _pydantic_ai_model() -> AnthropicModel:
    return AnthropicModel(ANTHROPIC_MODEL, provider=AnthropicProvider(api_key=NO_KEY))


def _completed(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The value of a coroutine that finishes without waiting on anything (as Pydantic AI's
    `_map_message` does for text and tool parts), run without an event loop's overhead."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("Pydantic AI's _map_message waited on I/O: this benchmark cannot time it fairly")


def pydantic_ai_to_anthropic(n: int) -> Contender:
    """Pydantic AI `AnthropicModel._map_message`: its message history -> (system, messages)."""
    history = pydantic_ai_messages(openai_messages(n))
    model = _pydantic_ai_model()
    parameters = ModelRequestParameters()

    def run() -> Any:
        return _completed(model._map_message(history, parameters, {}))

    def shape(out: Any) -> Shape:
        return shape_of(out[1])

    return Contender("Pydantic AI AnthropicModel._map_message", run, shape)


def pydantic_ai_reply() -> Contender:
    """Pydantic AI: the SDK's parse of the body (as the Anthropic client does it) and
    `AnthropicModel._process_response` (a ModelResponse with its usage)."""
    model = _pydantic_ai_model()
    parameters = ModelRequestParameters()

    def run() -> Any:
        message = construct_type(type_=BetaMessage, value=json.loads(REPLY_BYTES))
        return model._process_response(message, parameters, {})

    def shape(out: Any) -> ReplyShape:
        calls = [p for p in out.parts if isinstance(p, ToolCallPart)]
        return ReplyShape(len(out.parts), len(calls), out.usage.output_tokens)

    return Contender("Pydantic AI AnthropicModel._process_response", run, shape)


def pydantic_ai_load(history: list[ModelMessage]) -> Contender:
    """Pydantic AI `ModelMessagesTypeAdapter.validate_json` of its history's JSON (which it
    wrote with `dump_json`): its way of reading a stored conversation back."""
    data = ModelMessagesTypeAdapter.dump_json(history)

    def run() -> Any:
        return ModelMessagesTypeAdapter.validate_json(data)

    def check(out: Any) -> int:
        if out != history:
            raise AssertionError("Pydantic AI read back another conversation than it wrote")
        return len(out)

    return Contender("Pydantic AI ModelMessagesTypeAdapter.validate_json", run, check)


# --- LiteLLM ----------------------------------------------------------------------------------


def litellm_to_anthropic(n: int) -> Contender:
    """LiteLLM `anthropic_messages_pt`: its canonical form (OpenAI Chat messages, the system
    prompt apart, as `transform_request` splits it off first) -> Anthropic messages."""
    conversation = openai_messages(n)[1:]

    def run() -> Any:
        return anthropic_messages_pt(messages=conversation, model=ANTHROPIC_MODEL, llm_provider="anthropic")

    return Contender("LiteLLM anthropic_messages_pt", run, shape_of)


def litellm_convert(body: dict[str, Any]) -> Contender:
    """LiteLLM `AnthropicConfig`: `map_openai_params` (the tools and max_tokens) then
    `transform_request` (system, messages): an OpenAI Chat request body -> an Anthropic one."""
    config = AnthropicConfig()

    def run() -> Any:
        params = {"tools": body["tools"], "max_tokens": body["max_tokens"]}
        optional = config.map_openai_params(params, {}, ANTHROPIC_MODEL, drop_params=False)
        return config.transform_request(ANTHROPIC_MODEL, list(body["messages"]), optional, {}, {})

    def shape(out: Any) -> Shape:
        if not out.get("system") or len(out.get("tools", ())) != len(body["tools"]):
            raise AssertionError("LiteLLM's body lacks the system prompt or the tools")
        return shape_of(out["messages"])

    return Contender("LiteLLM AnthropicConfig.transform_request", run, shape)


class _Unlogged:
    """The logging object LiteLLM's `transform_response` reports to (its own does I/O)."""

    def post_call(self, *args: Any, **kwargs: Any) -> None:
        return None


def litellm_reply() -> Contender:
    """LiteLLM `AnthropicConfig.transform_response`: the HTTP response it is given (made
    here from the bytes) -> its ModelResponse with usage."""
    config = AnthropicConfig()
    log = _Unlogged()
    headers = {"content-type": "application/json"}

    def run() -> Any:
        raw = httpx.Response(200, content=REPLY_BYTES, headers=headers)
        return config.transform_response(
            model=ANTHROPIC_MODEL,
            raw_response=raw,
            model_response=LiteLLMResponse(),
            logging_obj=log,
            request_data={},
            messages=[],
            optional_params={"max_tokens": MAX_TOKENS},
            litellm_params={},
            encoding=None,
        )

    def shape(out: Any) -> ReplyShape:
        message = out.choices[0].message
        calls = len(message.tool_calls or ())
        return ReplyShape((1 if message.content else 0) + calls, calls, out.usage.completion_tokens)

    return Contender("LiteLLM AnthropicConfig.transform_response", run, shape)


# --- LangChain --------------------------------------------------------------------------------


def langchain_reply() -> Contender:
    """LangChain `ChatAnthropic`: the SDK's parse of the body (what `raw_response.parse()`
    does in `_generate`) and `_format_output` (an AIMessage with tool calls and usage)."""
    chat = ChatAnthropic(model_name=ANTHROPIC_MODEL, api_key=NO_KEY)

    def run() -> Any:
        message = construct_type(type_=AnthropicMessage, value=json.loads(REPLY_BYTES))
        return chat._format_output(message)

    def shape(out: Any) -> ReplyShape:
        message = out.generations[0].message
        calls = len(message.tool_calls)
        return ReplyShape(len(message.content), calls, message.usage_metadata["output_tokens"])

    return Contender("LangChain ChatAnthropic._format_output", run, shape)


REPLY_PEERS: list[Callable[[], Contender]] = [langchain_reply, pydantic_ai_reply, litellm_reply]
