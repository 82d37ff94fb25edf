"""Does a request body look like the provider `--from` names? Refuse it when it clearly does not.

Reading an Anthropic body as OpenAI Chat does not fail: the OpenAI adapter sees content
parts it does not know and drops them, so every tool call vanishes without an error. A
few unambiguous marks of each wire format (each provider's `RequestMarks` row, read by
`adapters._kit.detect`) are enough to catch the mix-up before anything is read; a body
with none of them (plain text turns) fits several formats and is accepted as the user says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click


def refuse_mismatch(body: Mapping[str, Any], provider: str, *, where: str) -> None:
    """A UsageError when `body` carries a mark `provider`'s wire format cannot have (the
    providers' marks rows, `adapters._kit.detect`)."""
    from ..adapters._kit.detect import contradiction

    found = contradiction(body, provider)
    if found is not None:
        what, fits = found
        raise click.UsageError(
            f"{where} does not look like {_article(provider)} {provider} request body: it has {what}, "
            f"which belongs to {' / '.join(sorted(fits))}; pass the matching --from"
        )


def guess_provider(body: Mapping[str, Any], reply: Any = None, *, model: str | None = None) -> str | None:
    """The one provider whose format a body (and its reply) can be, for a file that does not
    say (no URL, no `--from`): `adapters._kit.detect.detect` (ties go to the provider the
    model, `--model` else the body's, names, then to OpenAI Chat). None when nothing tells."""
    from ..adapters._kit.detect import detect

    return detect(body, reply, model=model)


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
