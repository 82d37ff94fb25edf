"""`metis models`: the model catalog, as `--model`, `replay --to` and the client read it.

One row per listed model: its canonical id, the aliases that name it, its context and
output limits, and what it can carry (the capabilities adapters check before sending,
spec §7.2). `--json` writes the catalog entries themselves (the schema's CatalogEntry).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ._common import dump_json
from ._shapes import PROVIDER

if TYPE_CHECKING:
    from metis_schema.v3 import AdapterCapabilities

CAPABILITIES = (
    ("supports_tools", "tools"),
    ("supports_images", "images"),
    ("supports_documents", "documents"),
    ("supports_audio", "audio"),
    ("supports_video", "video"),
    ("supports_thinking", "thinking"),
    ("supports_structured_output", "json"),
    ("supports_prompt_caching", "cache"),
)
"""(capability field, the word the table shows for it), in the order shown."""


def capability_words(capabilities: AdapterCapabilities) -> str:
    return " ".join(word for name, word in CAPABILITIES if getattr(capabilities, name))


@click.command()
@click.option("--provider", type=PROVIDER, help="Only this provider's models.")
@click.option("--json", "as_json", is_flag=True, help="As JSON: the catalog entries.")
def models(provider: str | None, as_json: bool) -> None:
    """List the model catalog: ids, aliases, context and output limits, capabilities."""
    from ..catalog import load_catalog
    from ._tables import grid

    entries = [e for e in load_catalog() if provider is None or e.provider == provider]
    if as_json:
        click.echo(dump_json([e.model_dump(mode="json", exclude_none=True) for e in entries]))
        return
    rows = [
        (
            e.id,
            ", ".join(e.aliases) or "-",
            f"{e.capabilities.max_context_tokens:,}",
            f"{e.capabilities.max_output_tokens:,}",
            capability_words(e.capabilities),
        )
        for e in entries
    ]
    click.echo(
        "\n".join(grid(("model", "aliases", "context", "output", "can carry"), rows, flex=4, right=(2, 3)))
    )


COMMANDS = [models]
