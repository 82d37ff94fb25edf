"""`WarnCapture`, the one log capture of the CLI: `convert`/`replay` capture the adapters'
drops, `import` every `metis` WARN while an exchange is read; each prints them once, where
they belong, and the loggers are as they were after."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from metis.cli import cli
from metis.cli._common import Drop, WarnCapture

from tests.support.cli_support import ANTHROPIC_BODY


class _Printer(logging.Handler):
    """Stands for the command's own `warning:` printer on the `metis` logger."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def printer() -> Iterator[_Printer]:
    logger = logging.getLogger("metis")
    handler = _Printer()
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def _state(name: str) -> tuple[int, list[logging.Handler], bool]:
    logger = logging.getLogger(name)
    return logger.level, list(logger.handlers), logger.propagate


def test_the_adapters_capture_keeps_their_drops_from_the_printer_and_lets_the_rest_through(
    printer: _Printer,
) -> None:
    before = _state("metis.adapters")
    with WarnCapture("metis.adapters") as capture:
        logging.getLogger("metis.adapters.openai").warning(
            "dropped %s",
            "thinking",
            extra={"adapter": "openai", "block_type": "thinking", "reason": "no place"},
        )
        logging.getLogger("metis.adapters").info("not a warning")
        logging.getLogger("metis.pricing").warning("no price for x")
    assert printer.lines == ["no price for x"]  # not the adapters' line: the command reports it
    assert capture.drops == [Drop("openai", "thinking", None, "no place", "dropped thinking")]
    assert _state("metis.adapters") == before


def test_the_import_capture_takes_every_metis_warning_and_puts_the_printer_back(printer: _Printer) -> None:
    before = _state("metis")
    with pytest.raises(RuntimeError), WarnCapture("metis") as capture:
        logging.getLogger("metis.pricing").warning("no price for x")
        logging.getLogger("metis.adapters").warning("not imported y")
        raise RuntimeError("the exchange failed")
    assert printer.lines == []
    assert [r.getMessage() for r in capture.records] == ["no price for x", "not imported y"]
    assert [d.reason for d in capture.drops] == ["no price for x", "not imported y"]
    assert _state("metis") == before
    logging.getLogger("metis.pricing").warning("after")
    assert printer.lines == ["after"]


def _stderr_lines(result: Result, needle: str) -> list[str]:
    return [line for line in result.stderr.splitlines() if needle in line]


def test_import_prints_an_adapter_warning_once_named_by_its_exchange_and_counts_it(tmp_path: Path) -> None:
    body = tmp_path / "odd.json"
    image = {"url": "https://example.com/a.png", "weird": 1}
    body.write_text(
        json.dumps(
            {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": image}]}],
            }
        )
    )
    result = CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "x.sqlite3"), "import", "--from", "openai", str(body)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    (line,) = _stderr_lines(result, "not imported weird")
    assert line.startswith(f"warning: {body}: not imported weird at messages[0].content[0].image_url.weird")
    assert f"{body}: 1 exchange(s): 1 stored, 1 dropped, 0 refused" in result.stderr


def test_convert_reports_each_drop_once_as_a_report_line_not_as_the_raw_log_line(tmp_path: Path) -> None:
    body = tmp_path / "anthropic.json"
    body.write_text(json.dumps(ANTHROPIC_BODY))
    result = CliRunner().invoke(
        cli, ["convert", "--from", "anthropic", "--to", "openai", str(body)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    (line,) = _stderr_lines(result, "thinking")
    assert "dropped thinking block from message #2 (assistant) [openai]" in line
    assert "(session " not in result.stderr  # the adapters' own log line, echoed by the printer
