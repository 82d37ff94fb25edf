"""`metis serve`: a gateway any OpenAI, Anthropic or Responses SDK can point at.

`create_app` builds the ASGI app over an `AsyncClient`; `exchange` holds the work of one
request (import with the inbound adapter, send upstream through the client, write the
reply back in the inbound format). See `app` for the routes.
"""

from __future__ import annotations

from .app import DEFAULT_MAX_BODY_BYTES, create_app
from .exchange import SESSION_HEADER, GatewayRequestError, target_model

__all__ = ["DEFAULT_MAX_BODY_BYTES", "SESSION_HEADER", "GatewayRequestError", "create_app", "target_model"]
