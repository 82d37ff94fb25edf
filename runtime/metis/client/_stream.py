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

from metis_schema.v3 import ErrorEvent, Message, StreamEvent, TextBlock, ThinkingBlock

from ..adapters import Adapter
from ..adapters._kit.framing import DEFAULT_MAX_EVENT_CHARS
from ..assembly import RequestContext, StreamAssembler
from ..errors import MetisError, NotAReplyError, ProviderError, StoreError, StreamLimitError
from ..protocols import SessionStore
from ._errors import ReplyNotSavedError

NOT_A_REPLY_BYTES = 2000
"""How much of a body that is not a reply its error keeps (the server's words, bounded)."""

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
        status: int = 200,
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
        self.status = status
        self._since_checkpoint = 0
        self._last_checkpoint: float | None = None
        self._checkpointed = False
        self._checkpoint_failure: StoreError | None = None
        self._events = 0
        self._head = bytearray()

    def feed(self, chunk: bytes) -> None:
        """Consume one raw piece of the body."""
        if len(self._head) < NOT_A_REPLY_BYTES:
            self._head += chunk[: NOT_A_REPLY_BYTES - len(self._head)]
        try:
            events = self.decoder.feed(chunk)
        except MetisError as exc:
            if not self._before_first_event(exc):
                raise
            raise self._not_a_reply(exc) from exc
        self._apply(events)

    def close(self) -> Message:
        """The body ended: flush the decoder, persist the final message and return it.

        A body that gave no event at all was not a reply stream (an error object, an
        HTML page, `null`, nothing): it ends as ERROR holding the server's text, and the
        NotAReplyError carries the status and that text.
        """
        try:
            try:
                events = self.decoder.close()
            except MetisError as exc:
                if not self._before_first_event(exc):
                    raise
                raise self._not_a_reply(exc) from exc
            self._apply(events)
            if not self._events:
                raise self._not_a_reply(None)
        except ReplyNotSavedError:
            raise
        except MetisError as exc:
            self.fail(exc)  # a malformed tail: keep what arrived as ERROR, then report
            raise
        except BaseException:
            self.cancel()  # interrupted: keep what arrived, then report
            raise
        try:
            final = self._finish(cancelled=False)
        except ReplyNotSavedError:
            raise
        except MetisError as exc:  # the reply cannot be assembled: the row must not stay PARTIAL
            self.fail(exc)
            raise
        error = self.assembler.error
        if error is not None:
            raise _stream_error(error, self.adapter.name, final, self.status)
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
        self._save(final)
        return final

    def _finish(self, *, cancelled: bool) -> Message:
        self.context.latency_ms = self._elapsed_ms()
        final = self.assembler.finish(self.decoder.provider_raw(), cancelled=cancelled)
        self._save(final)
        return final

    def _save(self, final: Message) -> None:
        """Finalize the row; a store that fails here raises ReplyNotSavedError, which says
        that what arrived is not saved and carries it (the caller still gets the text)."""
        try:
            self.store.finalize(final, tool_ids=self.context.tool_ids)
        except StoreError as exc:
            raise reply_not_saved(final, exc, checkpointed=self._checkpointed) from exc

    def _before_first_event(self, failure: MetisError) -> bool:
        """Whether the decoder's `failure` says the body was never a reply stream: no event
        had arrived. A bound hit (StreamLimitError) stays what it is."""
        return not self._events and not isinstance(failure, StreamLimitError)

    def _not_a_reply(self, cause: MetisError | None) -> NotAReplyError:
        """NotAReplyError for this body (`cause`: the decoder's complaint, if any)."""
        return not_a_reply(self.adapter.name, self.status, bytes(self._head), cause=cause)

    def _apply(self, events: list[StreamEvent]) -> None:
        for event in events:
            self._events += 1
            self.assembler.feed(event)
            if self.on_event is not None:
                self.on_event(event)
            self._since_checkpoint += 1
            self._maybe_checkpoint()

    def _maybe_checkpoint(self) -> None:
        if self._checkpoint_failure is not None:
            return  # the store failed once: no more waits on it mid-stream; `close` tries again
        now = self.clock()
        due = (
            self._last_checkpoint is None
            or self._since_checkpoint >= self.checkpoints.events
            or now - self._last_checkpoint >= self.checkpoints.seconds
        )
        if not due:
            return
        self.context.latency_ms = self._elapsed_ms()
        try:
            self.store.upsert_partial(self.assembler.snapshot())
        except StoreError as exc:  # a checkpoint is a safety net: the stream goes on without it
            self._checkpoint_failure = exc
            return
        self._checkpointed = True
        self._since_checkpoint = 0
        self._last_checkpoint = now

    def _elapsed_ms(self) -> int:
        return elapsed_ms(self.clock, self.started)


def reply_limit(context: RequestContext) -> int:
    """Bytes a non-streamed reply body may inflate to: the bound on one event of a stream
    (`max_event_chars`), since such a body is the whole reply in one piece."""
    return context.max_event_chars or DEFAULT_MAX_EVENT_CHARS


def elapsed_ms(clock: Callable[[], float], started: float) -> int:
    """Milliseconds since `started` on `clock` (never negative: a clock may step back)."""
    return max(int((clock() - started) * 1000), 0)


def _stream_error(error: ErrorEvent, provider: str, final: Message, status: int) -> ProviderError:
    """The ProviderError for an error event that ended a stream (the ERROR message is saved)."""
    return ProviderError(
        error.message,
        provider=error.provider or provider,
        error_type=error.code,
        status_code=status,
        retryable=error.retryable,
        message_id=final.id,
    )


def not_a_reply(
    provider: str, status: int, raw: bytes, *, location: str | None = None, cause: MetisError | None = None
) -> NotAReplyError:
    """The error for an answer that is not a reply (`NotAReplyError`): the status, and the
    server's text, bounded and made printable, in the message and in `body`."""
    text = raw[:NOT_A_REPLY_BYTES].decode("utf-8", errors="replace")
    shown = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in " ".join(text.split())
    )
    if 300 <= status < 400:
        what = "a redirect" + (f" to {location[:300]}" if location else "") + ", not a reply"
        hint = "metis does not follow redirects: set the provider's base URL to where the server points"
    else:
        what = "no reply" + (f" ({cause.message[:200]})" if cause is not None else "")
        hint = "the server did not answer as the provider's API does: check the base URL and the server"
    said = f"the server said: {shown[:500]}" if shown else "the body is empty"
    return NotAReplyError(
        f"{what}; {said}",
        provider=provider,
        error_type="not_a_reply",
        status_code=status,
        body=text,
        hint=hint,
    )


def reply_not_saved(reply: Message, cause: StoreError, *, checkpointed: bool) -> ReplyNotSavedError:
    """The error for a reply the store could not save: how much text arrived (carried, not
    saved), and what becomes of the PARTIAL checkpoint left behind."""
    chars = sum(len(b.text) for b in reply.content if isinstance(b, TextBlock | ThinkingBlock))
    left = (
        "; its PARTIAL checkpoint is finalized as CANCELLED by the session's next send or `metis repair`"
        if checkpointed
        else ""
    )
    return ReplyNotSavedError(
        f"the reply arrived ({chars} characters of text, status {reply.metadata.status.value}) but was "
        f"NOT saved: {cause.message}{left}",
        reply=reply,
        provider=reply.metadata.provider,
        message_id=reply.id,
        hint="the text is in this error's `reply`",
    )


__all__ = [
    "NOT_A_REPLY_BYTES",
    "CheckpointPolicy",
    "EventCallback",
    "StreamRun",
    "not_a_reply",
    "reply_limit",
    "reply_not_saved",
]
