"""Media admission: whether a media block may go to a provider at all, decided once.

Every writer asks the same questions of an image, document, audio or video block before
it builds its provider's part, and gets the same answers with the same §7.3 reasons:

- a `file_id` source is an upload to one provider's Files API; it goes only to a provider
  whose facts row reads that provider's file ids (`ProviderFacts.file_ids_from`), never
  with its data emptied or guessed at;

The writer still decides how an admitted block is spelled on its wire.
"""

from __future__ import annotations

from metis_schema.v2 import MediaSource, MediaSourceKind

from ._facts import ProviderFacts


def file_id_refusal(source: MediaSource, facts: ProviderFacts) -> str | None:
    """Why `source` cannot go to `facts.provider` (a file id of a provider whose uploads it
    cannot read), or None when it may (any other kind of source, or a file id it reads)."""
    if source.kind != MediaSourceKind.file_id or facts.reads_file_id(source.provider):
        return None
    owner = source.provider or "an unnamed provider"
    return f"a file id of {owner} means nothing to {facts.provider}"


__all__ = ["file_id_refusal"]
