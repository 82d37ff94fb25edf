"""Media admission: whether a media block may go to a provider at all, decided once.

Every writer asks the same questions of an image, document, audio or video block before
it builds its provider's part, and gets the same answers with the same §7.3 reasons:

- does the target model take this kind of medium (catalog capabilities: images and the
  image media types it lists, the provider's own wire narrowing those further; documents,
  audio, video)?
- a `file_id` source is an upload to one provider's Files API: it goes only to a provider
  whose facts row reads that provider's file ids (`ProviderFacts.file_ids_from`), never
  with its data emptied or guessed at.

`admit` answers both (None: the block may go); the writer then decides how its wire spells
an admitted block, and drops with its part's own reason what that part cannot hold. A
document that goes without fields its part has no place for says so once
(`document_losses`), only when it is sent.

The capabilities `admit` is asked with are the request's (`request_capabilities`): the
catalog's for the target model, widened by what the conversation itself shows that model
produced. A model that wrote images, audio or thinking in a reply of this history takes
those kinds back: replaying a conversation to the very model that made it never drops
them because the catalog knew the model less well than the conversation does. (Blocks a
user sent are no such evidence: the writer may have dropped them on the way out.)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    AudioBlock,
    CatalogEntry,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    ThinkingBlock,
    ToolResultBlock,
    VideoBlock,
)

from .facts import ProviderFacts
from .losses import Losses

MediaBlock = ImageBlock | DocumentBlock | AudioBlock | VideoBlock
"""The blocks whose bytes a MediaSource carries."""

DOCUMENT_FIELDS = ("title", "context", "citations_enabled")
"""A document's fields beside its bytes, which a provider's part may have no place for."""


_CAPABILITY_OF: dict[type, tuple[str, str]] = {
    ImageBlock: ("supports_images", "images"),
    DocumentBlock: ("supports_documents", "documents"),
    AudioBlock: ("supports_audio", "audio"),
    VideoBlock: ("supports_video", "video"),
    ThinkingBlock: ("supports_thinking", "thinking"),
    RedactedThinkingBlock: ("supports_thinking", "thinking"),
}
"""A block type -> the capability a model that took or produced it has, and its name in a WARN."""


def admit(
    block: MediaBlock,
    caps: AdapterCapabilities,
    model_id: str,
    facts: ProviderFacts,
    *,
    image_types: frozenset[str] | None = None,
) -> str | None:
    """Why `block` cannot go to `model_id` at `facts.provider`, or None when it may.

    `image_types`: the image media types the provider's wire takes at all, where it names
    them (Anthropic), beside those the model lists (`accepted_image_media_types`; an empty
    list says any)."""
    capability, kind = _CAPABILITY_OF[type(block)]
    if not getattr(caps, capability):
        return f"{model_id} does not accept {kind}"
    if isinstance(block, ImageBlock):
        refused = _image_type_refusal(block, caps, model_id, facts.provider, image_types)
        if refused is not None:
            return refused
    return file_id_refusal(block.source, facts)


def _image_type_refusal(
    block: ImageBlock,
    caps: AdapterCapabilities,
    model_id: str,
    provider: str,
    image_types: frozenset[str] | None,
) -> str | None:
    """Why an image of a model that takes images cannot go: its media type, which the model
    does not list, or the provider's wire does not take at all."""
    listed = caps.accepted_image_media_types
    if listed and block.media_type not in listed:
        return f"{model_id} does not accept {block.media_type}"
    if image_types is not None and block.media_type not in image_types:
        return f"{provider} images are {', '.join(sorted(image_types))}, not {block.media_type}"
    return None


def file_id_refusal(source: MediaSource, facts: ProviderFacts) -> str | None:
    """Why `source` cannot go to `facts.provider` (a file id of a provider whose uploads it
    cannot read), or None when it may (any other kind of source, or a file id it reads)."""
    if source.kind != MediaSourceKind.file_id or facts.reads_file_id(source.provider):
        return None
    owner = source.provider or "an unnamed provider"
    return f"a file id of {owner} means nothing to {facts.provider}"


def request_capabilities(
    entry: CatalogEntry, messages: Sequence[Message], *, adapter: str
) -> AdapterCapabilities:
    """The capabilities a request to `entry` is written with: the catalog's, widened by the
    conversation (module doc). Evidence is each reply `entry`'s model wrote
    (`metadata.model` its canonical id): each kind of block there the catalog says it does
    not take is taken, with one WARN per kind naming the message that shows it."""
    caps = entry.capabilities
    wider: dict[str, Any] = {}
    # The names a reply of `entry`'s model records (its canonical id, or provider:wire model),
    # made once per request: this loop runs over every message of every request written.
    names = (entry.id, f"{entry.provider}:{entry.wire_model}")
    for message in messages:
        if message.role is not Role.assistant or message.metadata.model not in names:
            continue
        for block in _blocks(message):
            found = _CAPABILITY_OF.get(type(block))
            if found is None or getattr(caps, found[0]) or found[0] in wider:
                continue
            wider[found[0]] = True
            _assumed(entry, message, block.type, found[1], adapter=adapter)
    return caps.model_copy(update=wider) if wider else caps


def _blocks(message: Message) -> list[ContentBlock]:
    """A message's blocks, with those inside its tool results (images, documents)."""
    out: list[ContentBlock] = []
    for block in message.content:
        out.append(block)
        if isinstance(block, ToolResultBlock):
            out.extend(block.content)
    return out


def _assumed(entry: CatalogEntry, message: Message, block_type: str, kind: str, *, adapter: str) -> None:
    """The WARN of one widened capability, with the §7.3 fields naming the evidence."""
    reason = (
        f"assuming {entry.id} takes {kind} back: the catalog says it does not take them, "
        f"but it wrote {kind} in this conversation (message {message.id})"
    )
    Losses(adapter, message.session_id).assumed(message, block_type, reason)


def document_losses(
    block: DocumentBlock,
    message: Message,
    index: int,
    *,
    adapter: str,
    part: str,
    carried: Collection[str] = (),
) -> None:
    """The one WARN (§7.3) of a document sent as `part`, which has no place for the set
    fields of `DOCUMENT_FIELDS` not in `carried`; nothing when it loses none. Call it
    for a document that is sent (a dropped one has its own WARN)."""
    lost = [
        name for name in DOCUMENT_FIELDS if name not in carried and getattr(block, name) not in (None, False)
    ]
    if lost:
        Losses(adapter, message.session_id).lost(
            message.id,
            "document",
            f"{part} has no {' or '.join(lost)}",
            at=f"document #{index} of message {message.id} ({', '.join(lost)})",
        )


__all__ = [
    "DOCUMENT_FIELDS",
    "MediaBlock",
    "admit",
    "document_losses",
    "file_id_refusal",
    "request_capabilities",
]
