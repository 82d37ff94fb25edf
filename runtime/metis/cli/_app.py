"""The `metis` click group and its error handling (see `metis.cli`)."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from .. import __version__
from ..errors import MetisError
from ._common import State, inert


def _fail(message: str, code: int) -> NoReturn:
    text = inert(" ".join(message.split()))  # an error may quote stored content
    click.echo(click.style(f"error: {text}", fg="red"), err=True)
    sys.exit(code)


class _WarningHandler(logging.Handler):
    """Library WARN lines (lossy drops, unpriced models) as yellow lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        text = inert(record.getMessage(), layout=True)  # a warning may quote stored content
        click.echo(click.style(f"warning: {text}", fg="yellow"), err=True)


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


def _db(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check a `--db` value and record it on the shared State (before or after the subcommand).

    A path whose directory does not exist is refused: silently creating directories
    for a mistyped path hides the mistake until the sessions seem to have vanished.
    URLs (`sqlite:///…`, `postgresql://…`) are the store's to check.
    """
    if value is None:
        return None
    if "://" not in value and value != ":memory:":
        parent = Path(value).expanduser().parent
        if not parent.is_dir():
            raise click.BadParameter(f"directory {parent} does not exist", ctx=ctx, param=param)
    ctx.ensure_object(State).db = value
    return value


DB_HELP = (
    "Store to use: a SQLite file or a postgresql:// URL "
    "(default: a file under METIS_HOME or the user data directory)."
)


def db_option(command: click.Command) -> click.Command:
    """`--db` on a subcommand too, so `metis show X --db f` works like `metis --db f show X`."""
    command.params.append(
        click.Option(["--db"], metavar="PATH", expose_value=False, callback=_db, help=DB_HELP)
    )
    return command


@click.group(
    "metis",
    cls=MetisGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    no_args_is_help=False,
)
@click.version_option(__version__, "-V", "--version", prog_name="metis", message="%(prog)s %(version)s")
@click.option("--db", metavar="PATH", envvar="METIS_DB", callback=_db, expose_value=False, help=DB_HELP)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """metis: canonical LLM conversations across Anthropic, OpenAI, Gemini, Ollama and OpenRouter."""
    ctx.call_on_close(ctx.ensure_object(State).close)
    if ctx.invoked_subcommand is None:  # bare `metis`: its help, exit 0
        click.echo(ctx.get_help())


__all__ = ["DB_HELP", "MetisGroup", "cli", "db_option"]
