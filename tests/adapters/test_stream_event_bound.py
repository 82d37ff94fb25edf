"""The bound on one stream event is the caller's (issue 17, item 1): `max_event_chars` on
AdapterOptions, a `send` option, reaches every provider's framer; past it the stream fails
with StreamLimitError and the reply is kept as ERROR; the default is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.adapters._kit.framing import DEFAULT_MAX_EVENT_CHARS, NDJSONFramer, SSEFramer
from metis.assembly import RequestContext
from metis.client import Client
from metis.errors import AdapterError, StreamLimitError
from metis.ids import ToolIdMap
from metis.store import Store
from metis_schema.v3 import MessageStatus

from tests.support.client_support import (
    KEYS,
    PROVIDERS,
    FakeTime,
    ProviderCase,
    ScriptedProvider,
    content_type,
    stream_chunks,
    stream_reply,
)


def test_the_option_defaults_to_the_framers_bound() -> None:
    options = AdapterOptions(model="m", session_id="s", tool_ids=ToolIdMap("s"))
    assert options.max_event_chars is None
    assert SSEFramer()._limit == DEFAULT_MAX_EVENT_CHARS == 64 * 1024 * 1024


@pytest.mark.parametrize("bad", [0, -5, 1.5, "10", True])
def test_a_bound_that_is_not_a_positive_integer_is_an_adapter_error(bad: object) -> None:
    with pytest.raises(AdapterError, match="max_event_chars must be a positive integer"):
        NDJSONFramer(max_event_chars=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", PROVIDERS, ids=[c.provider for c in PROVIDERS])
def test_every_decoder_frames_with_the_contexts_bound(case: ProviderCase) -> None:
    chunks = stream_chunks(case)
    longest = max(len(c) for c in chunks)

    def decode(limit: int | None) -> None:
        context = RequestContext(
            session_id="s", model=case.model, tool_ids=ToolIdMap("s"), max_event_chars=limit
        )
        decoder = adapters.get(case.provider).stream_decoder(context)
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.close()

    decode(None)  # the recorded stream passes the default
    decode(longest + 1024)
    with pytest.raises(StreamLimitError) as caught:
        decode(16)
    assert caught.value.limit == 16


@pytest.mark.parametrize("case", PROVIDERS[:2], ids=[c.provider for c in PROVIDERS[:2]])
def test_send_takes_the_bound_and_keeps_the_cut_reply_as_error(case: ProviderCase, tmp_path: Path) -> None:
    fake = FakeTime()
    provider = ScriptedProvider().add(
        stream_reply(stream_chunks(case), content_type=content_type(case)),
        stream_reply(stream_chunks(case), content_type=content_type(case)),
    )
    with Store.open(tmp_path / "m.sqlite3") as store:
        client = Client(
            store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
        )
        with client:
            session = client.session(case.model, workspace=tmp_path)
            with pytest.raises(StreamLimitError):
                session.send("hi", stream=True, max_event_chars=16)
            assert store.load_session(session.id)[-1].metadata.status == MessageStatus.error
            reply = session.send("hi", stream=True)  # the default bound: the same stream passes
            assert reply.metadata.status == MessageStatus.complete
