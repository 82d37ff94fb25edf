"""The `metis` click group and its error handling (see `metis.cli`)."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from ..errors import MetisError
from ._common import State


def _fail(message: str, code: int) -> NoReturn:
    text = " ".join(message.split())
    click.echo(click.style(f"error: {text}", fg="red"), err=True)
    sys.exit(code)


class _WarningHandler(logging.Handler):
    """Library WARN lines (lossy drops, unpriced models) as yellow lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(click.style(f"warning: {record.getMessage()}", fg="yellow"), err=True)


class MetisGroup(click.Group):
    """A click group whose errors are one clear line (see module docstring)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> NoReturn:
        debug = os.environ.get("METIS_DEBUG") == "1"
        logger = logging.getLogger("metis")
        handler = _WarningHandler(logging.WARNING)
        logger.addHandler(handler)
        try:
            rv = super().main(args, prog_name or "metis", complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:  # usage errors included (exit code 2)
            if debug:
                raise
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", 1)
        except (MetisError, OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            if debug:
                raise
            _fail(_describe(exc), 1)
        finally:
            logger.removeHandler(handler)
        sys.exit(rv if isinstance(rv, int) else 0)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"input is not UTF-8 text: {exc.reason}"
    return str(exc) or type(exc).__name__


@click.group(cls=MetisGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    envvar="METIS_DB",
    help="The store: a SQLite file or a postgresql:// URL (default: a file under METIS_HOME).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """metis: canonical LLM conversations across Anthropic, OpenAI, Gemini, Ollama and OpenRouter."""
    state = State(db=db)
    ctx.obj = state
    ctx.call_on_close(state.close)


__all__ = ["MetisGroup", "cli"]
