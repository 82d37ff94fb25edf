"""The v2 `block` stream event: a whole block at an index, folded by the one assembler.

Providers deliver some blocks complete (server tool calls and results, compaction, text
with its citations); a streamed reply must carry them as a whole reply does.
"""

from __future__ import annotations

from metis.assembly import RequestContext, StreamAssembler
from metis.ids import ToolIdMap, new_session_id
from metis_schema.v3 import (
    BlockEvent,
    CompactionBlock,
    MessageCompleteEvent,
    MessageStatus,
    StopReason,
    TextBlock,
    TextDeltaEvent,
    UsageUpdateEvent,
)


def _assembler() -> StreamAssembler:
    session_id = new_session_id()
    context = RequestContext(session_id=session_id, model="gpt-5", tool_ids=ToolIdMap(session_id))
    return StreamAssembler(context, "openai")


def _end(assembler: StreamAssembler) -> None:
    assembler.feed(UsageUpdateEvent(type="usage_update", input_tokens=3, output_tokens=4))
    assembler.feed(MessageCompleteEvent(type="message_complete", stop_reason=StopReason.end_turn))


def test_a_whole_block_keeps_its_place_among_streamed_blocks() -> None:
    compaction = CompactionBlock.model_validate(
        {"type": "compaction", "provider": "openai", "summary": "earlier turns"}
    )
    assembler = _assembler()
    assembler.feed(TextDeltaEvent(type="text_delta", index=1, text="after"))
    assembler.feed(BlockEvent(type="block", index=0, block=compaction))
    _end(assembler)
    message = assembler.finish()
    assert message.metadata.status == MessageStatus.complete
    assert [b.type for b in message.content] == ["compaction", "text"]
    assert message.content[0] == compaction


def test_the_whole_block_replaces_the_deltas_that_streamed_its_text() -> None:
    whole = TextBlock.model_validate(
        {"type": "text", "text": "Paris.", "citations": [{"type": "url", "url": "https://example.org/p"}]}
    )
    assembler = _assembler()
    assembler.feed(TextDeltaEvent(type="text_delta", index=0, text="Par"))
    assembler.feed(TextDeltaEvent(type="text_delta", index=0, text="is."))
    assert assembler.snapshot().content == [TextBlock(type="text", text="Paris.")]
    assembler.feed(BlockEvent(type="block", index=0, block=whole))
    _end(assembler)
    assert assembler.finish().content == [whole]


def test_text_deltas_after_a_whole_text_block_append_to_it() -> None:
    whole = TextBlock(type="text", text="Par")
    assembler = _assembler()
    assembler.feed(BlockEvent(type="block", index=0, block=whole))
    assembler.feed(TextDeltaEvent(type="text_delta", index=0, text="is."))
    _end(assembler)
    assert assembler.finish().content == [TextBlock(type="text", text="Paris.")]
