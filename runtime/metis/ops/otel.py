"""Live OpenTelemetry spans around each client exchange (the `metis[otel]` extra).

`instrument(client)` makes every `session.send` of that client run inside a CLIENT span
named `chat {model}`, with the GenAI attributes of `genai` (semantic conventions
`genai.SEMCONV_VERSION`): operation, provider, model and conversation before the request;
finish reason, token usage and metis's cost after it; the error type and an ERROR status
when the exchange fails. Message content is recorded only with `capture_content=True`
(the conventions make content opt-in: it may hold personal data), as JSON strings, since
span attributes cannot nest.

Only opentelemetry-api is imported: the application chooses the SDK and exporter (tests
use the SDK's InMemorySpanExporter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from metis_schema.v3 import Message

from .. import _json
from . import genai

try:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("metis.ops.otel needs the otel extra: pip install 'metis[otel]'") from exc

Done = Callable[[Message], None]
"""Called with the reply once the exchange has produced one."""


def _json_text(value: Any) -> str:
    return _json.dumps(value).decode()


class ExchangeTracer:
    """Wraps one exchange in a GenAI span (see module doc); `ClientSettings.tracer`."""

    def __init__(
        self, tracer_provider: trace.TracerProvider | None = None, *, capture_content: bool = False
    ) -> None:
        self._tracer = trace.get_tracer("metis", schema_url=genai.SCHEMA_URL, tracer_provider=tracer_provider)
        self.capture_content = capture_content

    @contextmanager
    def exchange(self, session_id: str, model: str, sent: Sequence[Message]) -> Iterator[Done]:
        """A span around the body of the `with`; call the yielded function with the reply."""
        attributes = genai.request_attributes(session_id, model)
        name = f"chat {attributes['gen_ai.request.model']}"
        with self._tracer.start_as_current_span(
            name,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=True,
            set_status_on_exception=True,
        ) as span:
            if self.capture_content:
                span.set_attribute("gen_ai.system_instructions", _json_text(genai.system_instructions(sent)))
                span.set_attribute("gen_ai.input.messages", _json_text(genai.input_messages(sent)))

            def done(reply: Message) -> None:
                span.set_attributes(genai.response_attributes(reply))
                if self.capture_content:
                    span.set_attribute("gen_ai.output.messages", _json_text(genai.output_messages(reply)))

            try:
                yield done
            except BaseException as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                raise


def instrument(
    client: Any, *, tracer_provider: trace.TracerProvider | None = None, capture_content: bool = False
) -> ExchangeTracer:
    """Trace every exchange of `client` (a `Client` or `AsyncClient`); returns the tracer."""
    tracer = ExchangeTracer(tracer_provider, capture_content=capture_content)
    client.settings.tracer = tracer
    return tracer


__all__ = ["Done", "ExchangeTracer", "instrument"]
