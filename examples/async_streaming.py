"""Async and streaming: print a reply as it arrives, then read the stored message back.

`AsyncClient` is the same API as `Client` for asyncio code. Streamed replies are saved as
they arrive (partial checkpoints) and finished as one complete canonical message.
Run: `python examples/async_streaming.py` (offline, on a recorded Anthropic stream).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import metis
from metis.client import AsyncClient, ReplayTransport

HERE = Path(__file__).resolve().parent


def show(event: metis.StreamEvent) -> None:
    if event.type == "text_delta":
        print(event.text, end="", flush=True)


async def main() -> None:
    recorded = ReplayTransport.from_file(HERE / "recorded" / "stream.json")
    store = metis.Store.open(":memory:")
    async with AsyncClient(
        store, transport=recorded.transport(), api_keys={"anthropic": "recorded"}
    ) as client:
        session = client.session("sonnet")
        reply = await session.send("What is metis?", stream=True, on_event=show)
        print()
    (stored,) = [m for m in store.load_session(session.id) if m.role == metis.Role.assistant]
    assert metis.message_hash(stored) == metis.message_hash(reply)  # what was streamed is what was stored
    print(f"{reply.metadata.usage.output_tokens} tokens out, ${reply.metadata.usage.cost_usd}")


if __name__ == "__main__":
    asyncio.run(main())
