"""Does a request body look like the provider `--from` names? Refuse it when it clearly does not.

Reading an Anthropic body as OpenAI Chat does not fail: the OpenAI adapter sees content
parts it does not know and drops them, so every tool call vanishes without an error. A
few unambiguous marks of each wire format are enough to catch the mix-up before
anything is read; a body with none of them (plain text turns) fits several formats and
is accepted as the user says.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import click

from ..errors import MetisError

CHAT = frozenset({"openai", "openrouter", "mistral", "ollama"})
"""Providers whose request bodies carry OpenAI-Chat-style `messages` (Ollama's /api/chat too)."""
ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document"})
OLLAMA_KEYS = ("options", "keep_alive", "format", "think")


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _marks(body: Mapping[str, Any]) -> Iterator[tuple[str, frozenset[str]]]:
    """(what was seen, the providers whose bodies can carry it)."""
    if "contents" in body:
        yield "a top-level `contents` list", frozenset({"gemini"})
    if "messages" in body:
        yield "a top-level `messages` list", CHAT | {"anthropic"}
    if "system" in body:
        yield "a top-level `system` field", frozenset({"anthropic"})
    for key in OLLAMA_KEYS:
        if key in body:
            yield f"the Ollama field `{key}`", frozenset({"ollama"})
    for message in _items(body.get("messages")):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            yield f"a `{role}` role message", CHAT
        if role == "tool" or "tool_calls" in message:
            yield "OpenAI-style tool messages (`tool` role, `tool_calls`)", CHAT
        if "images" in message:
            yield "a message `images` list", frozenset({"ollama"})
        for part in _items(message.get("content")):
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "thinking" and isinstance(part.get("thinking"), list):
                yield "a Mistral `thinking` part (a list of chunks)", frozenset({"mistral"})
            elif kind in ANTHROPIC_BLOCKS:
                yield f"an Anthropic `{kind}` content block", frozenset({"anthropic"})
            elif kind == "image_url":
                yield "an `image_url` content part", CHAT - {"ollama"}


def refuse_mismatch(body: Mapping[str, Any], provider: str, *, where: str) -> None:
    """A UsageError when `body` carries a mark `provider`'s wire format cannot have."""
    for what, fits in _marks(body):
        if provider not in fits:
            raise click.UsageError(
                f"{where} does not look like {_article(provider)} {provider} request body: it has {what}, "
                f"which belongs to {' / '.join(sorted(fits))}; pass the matching --from"
            )


_REPLY_MARKS: tuple[tuple[str, Any, frozenset[str]], ...] = (
    ("candidates", None, frozenset({"gemini"})),
    ("object", "chat.completion", CHAT - {"ollama"}),
    ("object", "response", frozenset({"responses"})),
    ("type", "message", frozenset({"anthropic"})),
    ("done", None, frozenset({"ollama"})),
)
"""(key, value or None for any, the providers) of a reply body's top level."""


def guess_provider(body: Mapping[str, Any], reply: Any = None, *, model: str | None = None) -> str | None:
    """The one provider whose format a body (and its reply) can be, for a file that does not
    say (no URL, no `--from`); ties go to the provider the model (`--model`, else the
    body's) names, then to the
    provider that owns the format (OpenAI Chat). None when nothing tells."""
    from .. import adapters
    from ..catalog import load_catalog

    fits = set(adapters.names())
    for _, providers in _marks(body):
        fits &= providers
    if "input" in body and "messages" not in body and "contents" not in body:
        fits &= {"responses"}
    if isinstance(reply, Mapping):
        for key, value, providers in _REPLY_MARKS:
            if key in reply and (value is None or reply[key] == value):
                fits &= providers
    model = model or body.get("model")
    if len(fits) > 1 and isinstance(model, str):
        try:
            named = load_catalog().resolve(model, allow_unlisted=False).provider
        except MetisError:
            named = None
        if named in fits:
            return named
    if len(fits) > 1 and "openai" in fits and fits <= CHAT | {"anthropic"}:
        return "openai"
    return next(iter(fits)) if len(fits) == 1 else None


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


class ProviderChoice(click.Choice):  # type: ignore[type-arg]
    """The adapter names, read from the adapter registry only when a command needs them.

    Building the choice list at import would load the adapters for every `metis` run,
    `metis --help` included.
    """

    def __init__(self) -> None:
        super().__init__((), case_sensitive=False)

    @property
    def choices(self) -> tuple[str, ...]:
        from .. import adapters

        return tuple(adapters.names())

    @choices.setter
    def choices(self, value: object) -> None:
        """Ignored: the names come from the registry."""


PROVIDER = ProviderChoice()

__all__ = ["PROVIDER", "ProviderChoice", "guess_provider", "refuse_mismatch"]
