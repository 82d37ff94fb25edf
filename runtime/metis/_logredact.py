"""Known API key values kept out of log records, as they are kept out of error texts.

Errors are redacted where the client raises them (`MetisError.redact`). Log records need
the same before any handler sees them: a record that quotes a server's echo of the key
(an adapter's warning about an odd stream line, with the line as an `extra` field; a
failure logged with its traceback) would otherwise carry it into whatever handlers the
application has, which are not ours to filter.

So every logger of metis (and of httpx and httpcore, which the client sends through)
gets `REDACT`, a filter that replaces each remembered key by REDACTED in the record's
message, its `extra` fields and its formatted traceback and stack. A logger's filters see
the records made on that logger only (not its children's), so the filter is put on each
one: when a key is first remembered and whenever loggers were added since (`remember`
runs for every request the client prepares, which is also when metis's modules, and
their loggers, have been imported). Keys are remembered for the life of the process:
redacting a value no longer used costs nothing and leaks nothing.

A logged exception's traceback is formatted and redacted on the record (`exc_text`, which
`logging.Formatter` writes instead of formatting it again); the exception object itself is
the caller's and is left as it is (metis's own errors are redacted before they are raised).
"""

from __future__ import annotations

import logging
import threading

from .errors import MIN_SECRET_CHARS, redact_text

_LOGGERS = frozenset({"metis", "httpx", "httpcore"})
"""Top-level names of the loggers whose records are redacted."""


class _Redact(logging.Filter):
    """Replaces each remembered key in a record (see module doc); never drops one."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = ()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            scrub(record, self.secrets)
        return True


REDACT = _Redact()
_LOCK = threading.Lock()
_attached = [0]  # how many loggers existed when the filter was last put on them


def remember(secret: str | None) -> None:
    """Redact `secret` from every later record of metis's loggers (see module doc)."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return
    loggers = logging.Logger.manager.loggerDict
    if secret in REDACT.secrets and len(loggers) == _attached[0]:
        return
    with _LOCK:
        if secret not in REDACT.secrets:
            REDACT.secrets = (*REDACT.secrets, secret)
        for name in _LOGGERS:
            logging.getLogger(name)
        for name, logger in list(loggers.items()):
            if not isinstance(logger, logging.Logger) or name.partition(".")[0] not in _LOGGERS:
                continue
            if REDACT not in logger.filters:
                logger.addFilter(REDACT)
        _attached[0] = len(loggers)


def scrub(record: logging.LogRecord, secrets: tuple[str, ...]) -> None:
    """Replace each secret in the record's message, `extra` fields, traceback and stack."""
    try:
        text = record.getMessage()
    except Exception:  # a record whose args do not fit: logging reports it when it is emitted
        return
    clean = redact_text(text, secrets)
    if clean != text:
        record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        # Formatted here, as a handler's Formatter would, which then uses this text.
        record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info), secrets)
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info, secrets)
    for name, value in list(vars(record).items()):
        if name in _STANDARD or isinstance(value, int | float | bool | None):
            continue
        text = value if isinstance(value, str) else repr(value)
        clean = redact_text(text, secrets)
        if clean != text:  # a container holding the key becomes its redacted text
            setattr(record, name, clean)


_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
"""A record's own attributes; any other was given as `extra=`."""


__all__ = ["REDACT", "remember", "scrub"]
