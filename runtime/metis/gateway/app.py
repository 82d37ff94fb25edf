"""`metis serve`: the ASGI app (FastAPI, for its OpenAPI document and streaming).

Routes speak the APIs the official SDKs call — `POST /v1/chat/completions` (OpenAI Chat;
also what Mistral and OpenRouter clients speak), `POST /v1/messages` (Anthropic),
`POST /v1/responses`, `GET /v1/responses/{id}` (Responses / Open Responses) and
`GET /v1/models` — so an application changes one base URL. Every conversation is stored
canonically by the metis client behind them (`exchange.Exchanges`).

Untrusted clients: a request body is read up to `max_body_bytes` and refused past it
(413); it must be a JSON object; every error — ours or the upstream's — answers in the
inbound API's own error shape with the right status, so the client's SDK raises its own
typed error. Nothing is half-written: a refused request stores nothing.

Every route first admits the request (`keys.admit`): a live gateway key, or, on a store
with no keys, a loopback client; else 401 in the inbound format. The key's principal is
recorded on every message the request stores. A store that fails before anything is sent
upstream (reading the conversation) answers 503 (nothing sent, nothing written); one that
fails recording the exchange does not lose the reply (`exchange.Exchanges._record`). Every
store call (a key lookup, a stored reply read back, an exchange's reads and its commit)
runs in a worker thread, never on the event loop that serves every client.

`GET /openapi.json` describes every route with the official SDKs' own request, reply and
stream event types (`openapi`), though the handlers read their bodies raw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from metis_schema.v3 import Message
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import adapters
from ..adapters._kit.reply import ReplyOptions
from ..catalog import load_catalog
from ..client import AsyncClient
from ..errors import MessageNotFoundError, MetisError, ProviderError, SessionNotFoundError, StoreError
from ..ids import ToolIdMap
from ..ops.compact import replayable
from . import openapi
from .exchange import (
    RECORD_HEADER,
    RECORD_RETRIES,
    SESSION_HEADER,
    Exchanges,
    GatewayRequestError,
    Principal,
    client_view,
)
from .keys import admit

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest request body read (a long agent history with images fits; a flood does not)."""


def _error(inbound: str, status: int, kind: str, message: str) -> JSONResponse:
    """An error in the inbound API's shape (what its SDK reads into its typed errors)."""
    if inbound == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return JSONResponse(body, status_code=status)


_KIND_BY_STATUS = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("authentication_error", "authentication_error"),
    503: ("api_error", "server_error"),
    404: ("not_found_error", "not_found_error"),
    405: ("invalid_request_error", "invalid_request_error"),
    413: ("request_too_large", "invalid_request_error"),
    429: ("rate_limit_error", "rate_limit_error"),
    500: ("api_error", "server_error"),
    502: ("api_error", "server_error"),
}
"""Status -> the error type Anthropic's and OpenAI's APIs name for it."""


def _kind(inbound: str, status: int) -> str:
    anthropic, openai = _KIND_BY_STATUS.get(status, ("api_error", "server_error"))
    return anthropic if inbound == "anthropic" else openai


async def _body(request: Request, limit: int) -> bytes | None:
    """The request body, or None past `limit` bytes (read no further)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(
    client: AsyncClient,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    retries: tuple[float, ...] = RECORD_RETRIES,
) -> FastAPI:
    """The gateway app over `client` (its store and upstream settings); `retries` are the
    delays of the background retries of an exchange the store failed to record. On
    shutdown the app waits for the commits and retries under way (`Exchanges.drain`)."""
    exchanges = Exchanges(client, retries=retries)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await exchanges.drain()

    app = FastAPI(title="metis gateway", version="1", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.state.exchanges = exchanges
    store = exchanges.store

    async def admitted(inbound: str, request: Request) -> Principal | Response:
        host = request.client.host if request.client else None
        try:
            found = await asyncio.to_thread(admit, store, request.headers, host)  # key lookups: off the loop
        except StoreError as exc:
            return _error(inbound, 503, _kind(inbound, 503), f"the store is unavailable: {exc}")
        if found.refused is not None:
            return _error(inbound, 401, _kind(inbound, 401), found.refused)
        return (found.user_id, found.team_id)

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, exc: StarletteHTTPException) -> Response:
        """What the framework refuses itself (no such route, a method a route does not take)
        answers in the shape of the API the path belongs to, like every other error."""
        inbound = "anthropic" if request.url.path.startswith("/v1/messages") else "openai"
        refusal = _error(inbound, exc.status_code, _kind(inbound, exc.status_code), str(exc.detail))
        refusal.headers.update(exc.headers or {})
        return refusal

    async def serve(inbound: str, request: Request) -> Response:
        principal = await admitted(inbound, request)
        if isinstance(principal, Response):
            return principal
        raw = await _body(request, max_body_bytes)
        if raw is None:
            return _error(inbound, 413, _kind(inbound, 413), f"request body over {max_body_bytes} bytes")
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return _error(inbound, 400, _kind(inbound, 400), f"the request body is not JSON: {exc}")
        if not isinstance(body, dict):
            return _error(inbound, 400, _kind(inbound, 400), "the request body must be a JSON object")
        try:
            prepared = await exchanges.prepare(inbound, body, request.headers, principal)
            if prepared.stream:
                frames = await exchanges.stream(prepared)  # raises what fails before any event
                headers = {SESSION_HEADER: prepared.session_id}
                return StreamingResponse(frames, media_type="text/event-stream", headers=headers)
            reply, _ = await exchanges.reply(prepared)
            headers = {SESSION_HEADER: prepared.session_id}  # recorded: a fork when it branched
            if prepared.record is not None:
                headers[RECORD_HEADER] = prepared.record
        except ProviderError as exc:
            status = exc.status_code if exc.status_code and 400 <= exc.status_code < 600 else 502
            return _error(inbound, status, exc.error_type or _kind(inbound, status), str(exc))
        except (MessageNotFoundError, SessionNotFoundError) as exc:  # a session or reply it names
            return _error(inbound, 404, _kind(inbound, 404), str(exc))
        except GatewayRequestError as exc:
            return _error(inbound, exc.status, _kind(inbound, exc.status), str(exc))
        except StoreError as exc:  # before anything was sent upstream: nothing half-written
            return _error(inbound, 503, _kind(inbound, 503), f"the store is unavailable: {exc}")
        except MetisError as exc:
            return _error(inbound, 400, _kind(inbound, 400), str(exc))
        return JSONResponse(reply, headers=headers)

    def route(inbound: str) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            return await serve(inbound, request)

        return handler

    # the handlers read their bodies raw (bounded); the document declares them (`openapi`)
    app.openapi = openapi.with_components(app.openapi)  # type: ignore[method-assign]
    app.post("/v1/chat/completions", summary="OpenAI Chat Completions", **openapi.create_route("Chat"))(
        route("openai")
    )
    app.post("/v1/messages", summary="Anthropic Messages", **openapi.create_route("Messages"))(
        route("anthropic")
    )
    app.post(
        "/v1/responses", summary="OpenAI Responses / Open Responses", **openapi.create_route("Responses")
    )(route("responses"))

    @app.get(
        "/v1/responses/{response_id}", summary="A stored Responses reply", **openapi.stored_response_route()
    )
    async def get_response(response_id: str, request: Request) -> Response:
        principal = await admitted("responses", request)
        if isinstance(principal, Response):
            return principal
        return await asyncio.to_thread(_stored_response, exchanges, response_id)

    @app.get("/v1/responses/{response_id}/input_items", summary="A stored Responses reply's input items")
    async def get_input_items(response_id: str, request: Request) -> Response:
        principal = await admitted("responses", request)
        if isinstance(principal, Response):
            return principal
        return await asyncio.to_thread(_input_items, exchanges, response_id, request.query_params)

    @app.get("/v1/models", summary="The catalog's models", **openapi.models_route())
    async def models(request: Request) -> Any:
        principal = await admitted("openai", request)
        if isinstance(principal, Response):
            return principal
        entries = list(load_catalog())
        return {
            "object": "list",
            "data": [{"id": e.id, "object": "model", "created": 0, "owned_by": e.provider} for e in entries],
        }

    return app


def _stored_reply(exchanges: Exchanges, response_id: str) -> Message | Response:
    """The stored reply a Responses id names (`Exchanges.stored_reply`), or the 404 OpenAI
    answers."""
    message = exchanges.stored_reply(response_id)
    if message is None:
        return _error("responses", 404, "not_found_error", f"no stored response {response_id!r}")
    return message


def _stored_response(exchanges: Exchanges, response_id: str) -> Response:
    """`GET /v1/responses/{id}`: the stored reply written as the Responses API returns it
    (it reads the store: run in a worker thread)."""
    message = _stored_reply(exchanges, response_id)
    if isinstance(message, Response):
        return message
    tool_ids = exchanges.store.load_tool_ids(message.session_id)  # a map of its own: writing mints ids
    metadata = message.metadata
    options = ReplyOptions(
        options=client_view("responses", metadata.model, message.session_id, tool_ids, metadata.endpoint),
        model_name=(metadata.model or "").split(":", 1)[-1],
        reply_id=response_id,
        message_id=message.id,
        created=int(message.created_at.timestamp()),
        producer=metadata.provider,
    )
    return JSONResponse(adapters.get("responses").to_wire_reply(message, options))


def _input_items(exchanges: Exchanges, response_id: str, query: Mapping[str, str]) -> Response:
    """The Responses API's input item list of a stored reply: the conversation the reply
    answered (its session up to the reply, as the Responses format writes it; the system
    prompt is the response's `instructions`, not an item), paged as OpenAI pages it
    (`order` desc by default, `after` an item id, `limit` 1..100, default 20). Each item's
    id is the response's id and the item's position, so pages are stable. (It reads the
    store: run in a worker thread.)"""
    message = _stored_reply(exchanges, response_id)
    if isinstance(message, Response):
        return message
    order = query.get("order", "desc")
    try:
        limit = int(query.get("limit", "20"))
    except ValueError:
        limit = 0
    if order not in {"asc", "desc"} or not 1 <= limit <= 100:
        return _error("responses", 400, "invalid_request_error", "order is asc or desc, limit 1..100")
    session = exchanges.client.resume(message.session_id)
    history = session.messages()
    before = replayable(history[: [m.id for m in history].index(message.id)])
    copy = ToolIdMap(session.id, list(session.tool_ids))  # writing mints ids: a copy
    options = client_view("responses", message.metadata.model, session.id, copy, message.metadata.endpoint)
    written = adapters.get("responses").to_wire(before, [], options).get("input", [])
    items = [{**item, "id": f"{response_id}_item_{n}"} for n, item in enumerate(written)]
    if order == "desc":
        items.reverse()
    after = query.get("after")
    if after is not None:
        ids = [item["id"] for item in items]
        items = items[ids.index(after) + 1 :] if after in ids else []
    page = items[:limit]
    return JSONResponse(
        {
            "object": "list",
            "data": page,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
            "has_more": len(items) > limit,
        }
    )


__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_app"]
