"""Identifiers: monotonic ULID message ids, `tu_<ulid>` tool ids, and the per-session
map between canonical tool ids and each provider's ids (spec §6.1, §6.2).

Canonical tool ids are made here, never by a provider, so a tool call keeps one id for
the life of a session whichever providers it visits. Each provider has its own rule for
the ids it accepts; `ToolIdMap` records the id a provider gave us and, when the session
is replayed to a provider whose rule that id breaks (a 44-character llama.cpp id sent to
OpenAI, a `functions.Bash:0` id sent to Anthropic), mints a compliant one instead,
deterministically from (session, canonical id, provider).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, NamedTuple

from ulid import ULID

from .errors import MetisError

TOOL_ID_PREFIX = "tu_"
_TOOL_ID = re.compile(r"^tu_[0-9A-HJKMNP-TV-Z]{26}$")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)  # 10-bit chunk -> 2 characters


# A 128-bit ULID's 26-character Crockford base32 text is `_time_text(value >> 80) +
# _random_text(value & (2**80 - 1))`: the text `str(ulid.ULID.from_bytes(...))` gives
# (tests check it against python-ulid), written as table lookups because id minting is
# on every hot path.


def _time_text(ms: int) -> str:
    """The first 10 characters: the 48-bit millisecond time (2 pad bits lead the first pair)."""
    p = _PAIRS
    return "".join(
        (p[ms >> 40 & 0x3FF], p[ms >> 30 & 0x3FF], p[ms >> 20 & 0x3FF], p[ms >> 10 & 0x3FF], p[ms & 0x3FF])
    )


def _random_text(rand: int) -> str:
    """The last 16 characters: the 80 random bits, unrolled (a generator costs twice as much)."""
    p = _PAIRS
    return "".join(
        (
            p[rand >> 70 & 0x3FF],
            p[rand >> 60 & 0x3FF],
            p[rand >> 50 & 0x3FF],
            p[rand >> 40 & 0x3FF],
            p[rand >> 30 & 0x3FF],
            p[rand >> 20 & 0x3FF],
            p[rand >> 10 & 0x3FF],
            p[rand & 0x3FF],
        )
    )


class _Monotonic:
    """ULIDs that strictly increase within this process, even within one millisecond."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_rand = 0
        self._text = ""  # the last id's text: ids of one millisecond share its first 24 chars

    def next(self) -> str:
        now = time.time_ns() // 1_000_000
        with self._lock:
            if now <= self._last_ms:
                rand = self._last_rand + 1
                low = rand & 0x3FF
                if low and rand < 1 << 80:
                    # The common repeat (parallel tool calls, a batch): only the last 10
                    # bits changed, so only the last two characters do.
                    self._last_rand = rand
                    self._text = text = self._text[:-2] + _PAIRS[low]
                    return text
                now = self._last_ms
                if rand >= 1 << 80:  # randomness exhausted in this ms: move to the next one
                    now += 1
                    rand = int.from_bytes(os.urandom(10), "big") >> 1
            else:
                rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom for increments
            self._last_ms, self._last_rand = now, rand
            self._text = text = _time_text(now) + _random_text(rand)
            return text


_ULIDS = _Monotonic()


def ulid_datetime(value: str) -> datetime:
    """When a ULID (message id, or the ULID of a `tu_`/`sess_` id) was minted, in UTC."""
    text = value.rsplit("_", 1)[-1]
    try:
        return ULID.from_str(text).datetime
    except ValueError as exc:
        raise ToolIdError(f"not a ULID: {value!r}") from exc


def new_message_id() -> str:
    """A new message id: a ULID greater than every id this process made before."""
    return _ULIDS.next()


def new_tool_id() -> str:
    """A new canonical tool call id, `tu_<ulid>` (remembered as one: see `is_tool_id`)."""
    tool_id = TOOL_ID_PREFIX + _ULIDS.next()
    _remember(tool_id)
    return tool_id


def new_session_id() -> str:
    """A new session id, `sess_<ulid>`."""
    return "sess_" + _ULIDS.next()


def provider_of(model_id: str) -> str:
    """The provider part of a canonical model id `<provider>:<model>` (§6.3); the whole id
    when it has no colon (then it names no provider, and a check against one fails)."""
    return model_id.split(":", 1)[0]


_SEEN_TOOL_IDS: set[str] = set()
_SEEN_MAX = 4096


def is_tool_id(value: str) -> bool:
    """True when `value` is a canonical tool id."""
    # Each id is checked several times (its tool_use, its result, the result's
    # parent_tool_use_id, on every append): a set lookup answers the repeats, which
    # costs a sixth of the regex. Only matches are remembered, a bounded number.
    # Ids minted by `new_tool_id` are remembered when minted: the store checks each
    # tool_use id of an appended batch, and the first check was the regex.
    if value in _SEEN_TOOL_IDS:
        return True
    if _TOOL_ID.fullmatch(value) is None:
        return False
    _remember(value)
    return True


def _remember(tool_id: str) -> None:
    """Add a canonical tool id to the bounded set `is_tool_id` answers repeats from."""
    if len(_SEEN_TOOL_IDS) >= _SEEN_MAX:
        _SEEN_TOOL_IDS.clear()
    _SEEN_TOOL_IDS.add(tool_id)


# --- provider id rules --------------------------------------------------------------------


@dataclass(frozen=True)
class IdRule:
    """What ids a provider accepts, and how to mint one from a canonical id."""

    description: str
    accepts: Callable[[str], bool]
    mint: Callable[[str, int], str]  # (seed, attempt) -> id
    required: bool = True  # False: the provider works without ids (Gemini, Ollama)


def _digest(seed: str, attempt: int) -> bytes:
    return hashlib.sha256(f"{seed}\x00{attempt}".encode()).digest()


def _base62(data: bytes, length: int) -> str:
    n = int.from_bytes(data, "big")
    chars = []
    for _ in range(length):
        n, r = divmod(n, 62)
        chars.append(_BASE62[r])
    return "".join(chars)


def _canonical_or(pattern: re.Pattern[str], prefix: str, length: int) -> Callable[[str, int], str]:
    """Mint: the canonical id itself when it fits (attempt 0), else prefix + hashed base62."""

    def mint(seed: str, attempt: int) -> str:
        canonical = seed.rsplit("\x00", 2)[1]
        if attempt == 0 and pattern.fullmatch(canonical):
            return canonical
        return prefix + _base62(_digest(seed, attempt), length)

    return mint


def _fits(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """Whole-string match (`re.match` with `$` would let a trailing newline through)."""
    return lambda s: pattern.fullmatch(s) is not None


_ANTHROPIC = re.compile(r"^[a-zA-Z0-9_-]+$")
_OPENAI = re.compile(r"^.{1,40}$", re.DOTALL)
_MISTRAL = re.compile(r"^[a-zA-Z0-9]{9}$")
_ANY = re.compile(r"^.+$", re.DOTALL)

ID_RULES: dict[str, IdRule] = {
    "anthropic": IdRule("^[a-zA-Z0-9_-]+$", _fits(_ANTHROPIC), _canonical_or(_ANTHROPIC, "toolu_", 24)),
    "openai": IdRule("at most 40 characters", _fits(_OPENAI), _canonical_or(_OPENAI, "call_", 24)),
    "mistral": IdRule(
        "exactly 9 alphanumerics",
        _fits(_MISTRAL),
        lambda seed, n: _base62(_digest(seed, n), 9),
    ),
    # OpenRouter passes upstream ids through unchanged, whatever their format or length.
    "openrouter": IdRule("any non-empty id", _fits(_ANY), _canonical_or(_ANY, "call_", 24)),
    "gemini": IdRule("optional; any", _fits(_ANY), _canonical_or(_ANY, "call_", 24), False),
    "ollama": IdRule("optional; any", _fits(_ANY), _canonical_or(_ANY, "call_", 24), False),
}
"""Provider key -> id rule. Unknown providers get the OpenAI rule (the strictest common one)."""


def id_rule(provider: str) -> IdRule:
    """The id rule for `provider` (the OpenAI rule for providers not listed)."""
    return ID_RULES.get(provider, ID_RULES["openai"])


# --- the per-session map -----------------------------------------------------------------


class ToolIdError(MetisError):
    """A tool id cannot be mapped (e.g. a canonical id that is not `tu_<ulid>`)."""


class ToolIdEntry(NamedTuple):
    """One binding: canonical id <-> provider id, for one provider.

    `origin` is "provider" when the provider issued the id and "minted" when metis made it
    for replay to that provider. A NamedTuple, immutable like a frozen dataclass but made
    several times faster: every tool call of every response adds one.
    """

    canonical: str
    provider: str
    provider_id: str
    origin: str


@dataclass
class _Import:
    """One request import in progress (`ToolIdMap.importing`)."""

    claimed: set[str] = field(default_factory=set)
    """Canonical ids this import has given a call: each history call takes one of its own."""
    latest: dict[tuple[str, str], str] = field(default_factory=dict)
    """(provider, provider id) -> the call of this import that carried it last: what a
    tool result later in the same history answers."""


class ToolIdMap:
    """Per-session bidirectional map canonical tool id <-> provider id, per provider.

    Incoming ids of a response are registered with `register_incoming`, which mints a
    *new* canonical id: a tool_use in a response is a new call even when a server reuses
    ids like `call_0`. A request import (`importing`) reads a history instead, whose calls
    the session may know already (a gateway's client resends the whole history every
    turn): there a provider id the session maps keeps its canonical id, so importing the
    same history twice adds nothing and changes no id. A tool_result's provider id
    resolves to the most recent tool_use that carried it (`resolve_incoming`). Outgoing,
    `outgoing` returns the provider's own id when it was recorded and still satisfies the
    provider's rule, else a deterministic, collision-free minted id.

    Sent ids are unique per provider: when a server reused one id for several calls (two
    `call_0` in one reply, or one per turn), only the latest call that carried it (the one
    `resolve_incoming` answers) replays it; each earlier one gets a minted id. Replayed
    verbatim, the duplicates would make the request ambiguous or invalid (providers reject
    repeated tool ids, and a result could not say which call it answers).
    """

    def __init__(self, session_id: str, entries: list[ToolIdEntry] | None = None) -> None:
        self.session_id = session_id
        self._entries: list[ToolIdEntry] = []
        self._incoming: dict[tuple[str, str], str] = {}
        self._outgoing: dict[tuple[str, str], str] = {}
        # provider -> every id ever bound outgoing for it: a minted id must be none of them.
        # Kept as entries are added, so minting for a fresh map (every `metis convert`, the
        # first request of an imported session) is linear in its tool calls, not quadratic.
        self._sent: dict[str, set[str]] = {}
        # provider -> canonical -> the id `outgoing` settled on (it passed the provider's
        # rule): every later request answers from here with one lookup. Reset for a
        # canonical id whenever a binding of it is added.
        self._settled: dict[str, dict[str, str]] = {}
        # provider -> canonical -> the first id that provider issued for it (`issued_by`).
        self._issued: dict[str, dict[str, str]] = {}
        # (provider, provider id) -> every canonical id bound to it, oldest first: the calls
        # an import may find again (a server that reuses `call_0` has several).
        self._calls: dict[tuple[str, str], list[str]] = {}
        self._import: _Import | None = None
        for entry in entries or []:
            self._add(entry)

    def _add(self, entry: ToolIdEntry) -> None:
        # Runs for every tool call a reply or an import brings: each index is read and
        # written once (no `setdefault` building a default it throws away).
        canonical, provider, provider_id, origin = entry
        self._entries.append(entry)
        key = (provider, provider_id)
        calls = self._calls.get(key)
        if calls is None:
            self._calls[key] = [canonical]
        else:
            calls.append(canonical)
        previous = self._incoming.get(key)
        self._incoming[key] = canonical
        settled = self._settled.get(provider)
        if settled is not None:
            settled.pop(canonical, None)
            if previous is not None:
                settled.pop(previous, None)  # it no longer owns that id: `outgoing` decides again
        out_key = (provider, canonical)
        if origin == "minted":
            # A minted id replaced a provider id the provider's rule refused; on reload it
            # must win again, or every reload re-mints and appends a duplicate entry.
            self._outgoing[out_key] = sent_id = provider_id
        else:
            if origin == "provider":
                issued = self._issued.get(provider)
                if issued is None:
                    self._issued[provider] = {canonical: provider_id}
                elif canonical not in issued:
                    issued[canonical] = provider_id
            held = self._outgoing.get(out_key)
            if held is None:
                self._outgoing[out_key] = sent_id = provider_id
            else:
                sent_id = held
        sent = self._sent.get(provider)
        if sent is None:
            self._sent[provider] = {sent_id}
        else:
            sent.add(sent_id)

    def __iter__(self) -> Iterator[ToolIdEntry]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        """Always true: an empty map is still *the session's* map, and `ids or ToolIdMap(...)`
        must never silently swap a fresh map in for it."""
        return True

    def register_incoming(self, provider: str, provider_id: str | None) -> str:
        """The canonical id of a tool call the provider made, binding its id if any.

        A response's call is always new (a fresh id). In an import (`importing`), the call
        is first looked up: the oldest canonical id the session bound to this provider id
        that no earlier call of the same import took. So the n-th `call_0` of a history is
        the n-th `call_0` the session knows, and a history imported again maps every call
        to the id it had; only calls the session never saw are minted (and bound).
        """
        current = self._import
        if current is not None and provider_id:
            key = (provider, provider_id)
            for known in self._calls.get(key, ()):
                if known not in current.claimed:
                    current.claimed.add(known)
                    current.latest[key] = known
                    return known
        canonical = new_tool_id()
        if provider_id:
            self._add(ToolIdEntry(canonical, provider, provider_id, "provider"))
            if current is not None:
                current.claimed.add(canonical)
                current.latest[(provider, provider_id)] = canonical
        return canonical

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Within this block, `register_incoming` reads a recorded history (see there) and
        `resolve_incoming` answers from the calls that history made so far.

        Every request importer runs inside one. Imports do not nest into each other: an
        inner one starts afresh and the outer one resumes after it. The mode belongs to the
        map, like the rest of a session's state: one session does not import a history and
        read a reply at the same moment.
        """
        outer, self._import = self._import, _Import()
        try:
            yield
        finally:
            self._import = outer

    def bind(self, canonical: str, provider: str, provider_id: str, origin: str = "provider") -> None:
        """Record that `provider` knows `canonical` as `provider_id`."""
        if not is_tool_id(canonical):
            raise ToolIdError(f"not a canonical tool id: {canonical!r}", provider=provider)
        if self._outgoing.get((provider, canonical)) == provider_id:
            return
        self._add(ToolIdEntry(canonical, provider, provider_id, origin))

    def resolve_incoming(self, provider: str, provider_id: str) -> str | None:
        """The canonical id of the latest tool call `provider` issued as `provider_id` (in an
        import, the latest of that history, when it made one)."""
        key = (provider, provider_id)
        if self._import is not None:
            found = self._import.latest.get(key)
            if found is not None:
                return found
        return self._incoming.get(key)

    def provider_id(self, canonical: str, provider: str) -> str | None:
        """The id recorded for `canonical` at `provider`, if any (no minting)."""
        return self._outgoing.get((provider, canonical))

    def issued_by(self, provider: str) -> Mapping[str, str]:
        """canonical id -> the first id `provider` itself issued for it (read-only view).

        What an adapter needs to tell its own provider's calls from foreign ones, kept as
        entries are added instead of scanning every entry on every request.
        """
        return MappingProxyType(self._issued.get(provider, {}))

    def outgoing(self, canonical: str, provider: str) -> str:
        """The id to send to `provider` for `canonical`: its own if valid, else minted."""
        settled = self._settled.get(provider)
        if settled is None:
            settled = self._settled[provider] = {}
        else:
            hit = settled.get(canonical)
            if hit is not None:
                return hit
        rule = id_rule(provider)
        known = self._outgoing.get((provider, canonical))
        if known is not None and rule.accepts(known) and self._incoming.get((provider, known)) == canonical:
            settled[canonical] = known
            return known
        taken = self._sent.setdefault(provider, set())
        seed = f"{self.session_id}\x00{canonical}\x00{provider}"
        for attempt in range(1000):
            candidate = rule.mint(seed, attempt)
            owner = self._incoming.get((provider, candidate))
            if candidate not in taken and owner in (None, canonical):
                self._outgoing[(provider, canonical)] = candidate
                taken.add(candidate)
                self._entries.append(ToolIdEntry(canonical, provider, candidate, "minted"))
                self._incoming[(provider, candidate)] = canonical
                self._calls.setdefault((provider, candidate), []).append(canonical)
                settled[canonical] = candidate
                return candidate
        raise ToolIdError(f"could not mint a unique {provider} id for {canonical}", provider=provider)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form, for the store."""
        return {
            "session_id": self.session_id,
            "entries": [
                {
                    "canonical": e.canonical,
                    "provider": e.provider,
                    "provider_id": e.provider_id,
                    "origin": e.origin,
                }
                for e in self._entries
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolIdMap:
        """Inverse of `to_dict`; ToolIdError naming the entry when `data` is malformed."""
        if not isinstance(data, Mapping) or not isinstance(data.get("session_id"), str):
            raise ToolIdError("malformed tool id map: no session_id string", path="session_id")
        raw = data.get("entries")
        if not isinstance(raw, list):
            raise ToolIdError("malformed tool id map: entries is not a list", path="entries")
        entries = []
        for i, e in enumerate(raw):
            keys = ("canonical", "provider", "provider_id")
            fields = [e.get(k) if isinstance(e, Mapping) else None for k in keys]
            origin = e.get("origin", "provider") if isinstance(e, Mapping) else None
            if not all(isinstance(f, str) and f for f in fields) or origin not in ("provider", "minted"):
                raise ToolIdError(
                    "malformed tool id map entry: needs canonical, provider, provider_id strings "
                    f"and origin 'provider' or 'minted', got {e!r:.120}",
                    path=f"entries[{i}]",
                )
            canonical, provider, provider_id = (str(f) for f in fields)
            if not is_tool_id(canonical):
                raise ToolIdError(f"not a canonical tool id: {canonical!r}", path=f"entries[{i}].canonical")
            entries.append(ToolIdEntry(canonical, provider, provider_id, str(origin)))
        return cls(data["session_id"], entries)


__all__ = [
    "ID_RULES",
    "IdRule",
    "ToolIdEntry",
    "ToolIdError",
    "ToolIdMap",
    "id_rule",
    "is_tool_id",
    "new_message_id",
    "new_session_id",
    "new_tool_id",
    "ulid_datetime",
]
