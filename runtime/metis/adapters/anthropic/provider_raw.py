"""provider_raw of Anthropic messages: what an exact replay needs beyond the canonical blocks.

Blocks with no canonical type (container_upload, mcp_tool_use, custom-content documents,
file-sourced images, block types added later) are kept verbatim (`foreign`); block keys
with no canonical field (a tool call's `caller`, a compaction's `signature` and
`tool_changes`) likewise (`extras`); and each citation's opaque keys (a web search
citation's `encrypted_index`, which Anthropic requires back) in `cites`. All are keyed by
the block's wire position, so an export back to Anthropic puts each where it was.
Written only on messages whose provider is "anthropic" and read only by this package
(spec §6.5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from metis_schema.v3 import Message

from .._kit.losses import Losses
from .._kit.provenance import own_raw
from .facts import PROVIDER


@dataclass
class Replay:
    """Foreign blocks and extra block keys of one message, keyed by wire position path.

    Paths are "3" (fourth block of the message's wire list) or "0/2" (third item of the
    content of the message's first block, i.e. inside a tool_result).
    """

    foreign: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, dict[str, Any]] = field(default_factory=dict)
    cites: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per text block, one entry per canonical citation: its opaque wire keys ({} if none)."""
    lost: list[str] = field(default_factory=list)
    """What reading dropped without a place to keep it (e.g. a citation type added later),
    for the caller's one WARN; never written to provider_raw."""

    @classmethod
    def of(cls, message: Message) -> Replay:
        """What `message` kept for replay; only read (a message that kept nothing shares one)."""
        if message.metadata.provider_raw is None:
            return NOTHING_KEPT
        raw = own_raw(message, PROVIDER)
        foreign, extras, cites = raw.get("foreign"), raw.get("extras"), raw.get("cites")
        if not foreign and not extras and not cites:
            return NOTHING_KEPT
        return cls(
            foreign=dict(foreign) if isinstance(foreign, dict) else {},
            extras=dict(extras) if isinstance(extras, dict) else {},
            cites=_cites(cites),
        )

    def foreign_types(self) -> list[str]:
        """The wire types of the blocks kept verbatim (`foreign`), for the WARN naming them."""
        return [str(block.get("type")) for block in self.foreign.values()]

    def dump(self) -> dict[str, Any]:
        """The `foreign` and `extras` entries of provider_raw (none when nothing was kept)."""
        out: dict[str, Any] = {}
        if self.foreign:
            out["foreign"] = self.foreign
        if self.extras:
            out["extras"] = self.extras
        if any(any(entry) for entry in self.cites.values()):
            out["cites"] = {key: kept for key, kept in self.cites.items() if any(kept)}
        return out

    def keep_extras(self, key: str, block: Mapping[str, Any], known: frozenset[str]) -> None:
        """Record the keys of wire block `block` (at `key`) that have no canonical field."""
        if known.issuperset(block):
            return  # the usual block: only keys with a canonical field
        extra = {k: v for k, v in block.items() if k not in known and v is not None}
        if extra:
            self.extras[key] = extra

    def wire_keys(self, count: int, inside: int | None = None) -> list[str]:
        """The wire position keys of `count` converted blocks of the message (or of the
        content of its block `inside`): each takes the next position no kept foreign block
        holds. `splice` puts blocks there; the writer reads what is kept at them."""
        prefix = "" if inside is None else f"{inside}/"
        taken = self._foreign_at(prefix)
        keys: list[str] = []
        position = 0
        for _ in range(count):
            while position in taken:
                position += 1
            keys.append(f"{prefix}{position}")
            position += 1
        return keys

    def _foreign_at(self, prefix: str) -> dict[int, Any]:
        return {
            int(key[len(prefix) :]): block
            for key, block in self.foreign.items()
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
        }

    def splice(
        self, converted: Sequence[dict[str, Any] | None], inside: int | None = None
    ) -> list[dict[str, Any]]:
        """Wire blocks of the message (or of the content of its block `inside`): the converted
        canonical blocks (None = dropped) at their `wire_keys`, with the foreign blocks put
        back at their recorded positions and extras re-applied."""
        if not self.foreign and not self.extras:
            return [block for block in converted if block is not None]  # nothing to put back
        prefix = "" if inside is None else f"{inside}/"
        foreign = self._foreign_at(prefix)
        out: list[dict[str, Any]] = []
        for key, block in zip(self.wire_keys(len(converted), inside), converted, strict=True):
            position = int(key[len(prefix) :])
            out.extend(foreign.pop(p) for p in sorted(p for p in foreign if p < position))
            if block is not None:
                extra = self.extras.get(key)
                out.append({**block, **extra} if extra else block)
        out.extend(foreign[k] for k in sorted(foreign))
        return out


NOTHING_KEPT = Replay()
"""The replay of every message that kept nothing (`Replay.of`); never written to."""


def response_raw(rid: Any, model: Any, stop: Any, stop_sequence: Any, replay: Replay) -> dict[str, Any]:
    """provider_raw of a reply: its id, model and stop fields beside what replay needs."""
    return {
        "adapter": PROVIDER,
        "id": rid,
        "model": model,
        "stop_reason": stop,
        "stop_sequence": stop_sequence,
        **replay.dump(),
    }


def warn_foreign(
    session_id: str, message_id: str | None, types: Sequence[str], where: str, lost: Sequence[str] = ()
) -> None:
    """One WARN per message naming the wire block types metis has no type for (kept in
    provider_raw) and what it left out with no place to keep it (`Replay.lost`); none
    when there are neither."""
    if not types and not lost:
        return
    names = ", ".join([*types, *lost])
    if not lost:
        reason, fate = (
            "no canonical block type; kept in provider_raw",
            "kept in provider_raw for replay to anthropic",
        )
    elif not types:
        reason, fate = "no canonical form; left out", "left out"
    else:
        reason = fate = "no canonical form; blocks kept in provider_raw, the rest left out"
    Losses(PROVIDER, session_id).lost(
        message_id, names, reason, at=f"{where} {message_id} (no canonical type; {fate})", whole=True
    )


def _cites(kept: Any) -> dict[str, list[dict[str, Any]]]:
    """provider_raw's `cites` as the writer reads it: a list of kept objects per block key.
    provider_raw is the caller's to build; an entry of another shape is read as nothing kept
    (an empty object, so the list stays aligned with the block's citations) rather than
    failing the request with an AttributeError."""
    if not isinstance(kept, dict):
        return {}
    return {
        key: [entry if isinstance(entry, dict) else {} for entry in entries]
        for key, entries in kept.items()
        if isinstance(entries, list)
    }


__all__ = [
    "NOTHING_KEPT",
    "Replay",
    "response_raw",
    "warn_foreign",
]
