"""One streamed response, folded into a Message and checkpointed while it arrives.

Sans-IO: the sync and async clients feed it the raw bytes httpx hands them, and it does
the rest: the adapter's decoder turns bytes into canonical events, the assembler folds
them into a message, each event goes to the caller's `on_event`, and a PARTIAL
checkpoint is written every N events or T seconds (whichever first), so a crash or a
kill loses at most that much. `close` writes the final message; `cancel` writes what
arrived as CANCELLED, because a user who pressed Ctrl-C still wants to see it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from metis_schema.v3 import ErrorEvent, Message, StreamEvent

from ..adapters import Adapter
from ..assembly import RequestContext, StreamAssembler
from ..errors import MetisError, ProviderError
from ._protocols import SessionStore

EventCallback = Callable[[StreamEvent], None]


@dataclass(frozen=True)
class CheckpointPolicy:
    """How often a streaming message is saved as PARTIAL: every `events` events or `seconds`."""

    events: int = 32
    seconds: float = 0.25


class StreamRun:
    """Decode, assemble, forward and checkpoint one streamed response."""

    def __init__(
        self,
        adapter: Adapter,
        context: RequestContext,
        store: SessionStore,
        *,
        on_event: EventCallback | None,
        checkpoints: CheckpointPolicy,
        started: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.adapter = adapter
        self.context = context
        self.store = store
        self.on_event = on_event
        self.checkpoints = checkpoints
        self.clock = clock
        self.started = started
        self.decoder = adapter.stream_decoder(context)
        self.assembler = StreamAssembler(context, adapter.name)
        self._since_checkpoint = 0
        self._last_checkpoint: float | None = None

    def feed(self, chunk: bytes) -> None:
        """Consume one raw piece of the body."""
        self._apply(self.decoder.feed(chunk))

    def close(self) -> Message:
        """The body ended: flush the decoder, persist the final message and return it."""
        try:
            self._apply(self.decoder.close())
        except MetisError as exc:
            self.fail(exc)  # a malformed tail: keep what arrived as ERROR, then report
            raise
        except BaseException:
            self.cancel()  # interrupted: keep what arrived, then report
            raise
        try:
            final = self._finish(cancelled=False)
        except MetisError as exc:  # the reply cannot be assembled: the row must not stay PARTIAL
            self.fail(exc)
            raise
        error = self.assembler.error
        if error is not None:
            raise _stream_error(error, self.adapter.name, final)
        return final

    def cancel(self) -> Message:
        """The stream stopped early: persist what arrived as CANCELLED and return it."""
        return self._finish(cancelled=True)

    def fail(self, failure: Exception) -> Message:
        """A failure ended the exchange: persist what arrived as ERROR and return it."""
        self.context.latency_ms = self._elapsed_ms()
        try:
            raw = self.decoder.provider_raw()
        except MetisError:
            raw = None
        final = self.assembler.fail(failure, raw)
        self.store.finalize(final, tool_ids=self.context.tool_ids)
        return final

    def _finish(self, *, cancelled: bool) -> Message:
        self.context.latency_ms = self._elapsed_ms()
        final = self.assembler.finish(self.decoder.provider_raw(), cancelled=cancelled)
        self.store.finalize(final, tool_ids=self.context.tool_ids)
        return final

    def _apply(self, events: list[StreamEvent]) -> None:
        for event in events:
            self.assembler.feed(event)
            if self.on_event is not None:
                self.on_event(event)
            self._since_checkpoint += 1
            self._maybe_checkpoint()

    def _maybe_checkpoint(self) -> None:
        now = self.clock()
        due = (
            self._last_checkpoint is None
            or self._since_checkpoint >= self.checkpoints.events
            or now - self._last_checkpoint >= self.checkpoints.seconds
        )
        if not due:
            return
        self.context.latency_ms = self._elapsed_ms()
        self.store.upsert_partial(self.assembler.snapshot())
        self._since_checkpoint = 0
        self._last_checkpoint = now

    def _elapsed_ms(self) -> int:
        return elapsed_ms(self.clock, self.started)


def elapsed_ms(clock: Callable[[], float], started: float) -> int:
    """Milliseconds since `started` on `clock` (never negative: a clock may step back)."""
    return max(int((clock() - started) * 1000), 0)


def _stream_error(error: ErrorEvent, provider: str, final: Message) -> ProviderError:
    """The ProviderError for an error event that ended a stream (the ERROR message is saved)."""
    return ProviderError(
        error.message,
        provider=error.provider or provider,
        error_type=error.code,
        retryable=error.retryable,
        message_id=final.id,
    )


__all__ = ["CheckpointPolicy", "EventCallback", "StreamRun"]
