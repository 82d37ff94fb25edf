"""Known API key values and store passwords kept out of log records, as out of error texts.

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

Store passwords are kept out the same way (`remember_password`, called when a PostgreSQL
store is opened): psycopg-pool logs each failed connection attempt with libpq's message,
and libpq quotes a URL's malformed password in it ("invalid percent-encoded token:
"pa%ss""), on every retry while the server is down. So the `psycopg` loggers get the filter
too. A password of any length is secret; one shorter than a key's minimum is replaced only
where libpq quotes it whole ("..."), so a short password does not garble every word that
happens to contain it.

A logged exception's traceback is formatted and redacted on the record (`exc_text`, which
`logging.Formatter` writes instead of formatting it again); the exception object itself is
the caller's and is left as it is (metis's own errors are redacted before they are raised).
"""

from __future__ import annotations

import logging
import threading

from .errors import MIN_SECRET_CHARS, REDACTED, redact_text

_LOGGERS = frozenset({"metis", "httpx", "httpcore", "psycopg"})
"""Top-level names of the loggers whose records are redacted."""


class _Redact(logging.Filter):
    """Replaces each remembered key in a record (see module doc); never drops one."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: tuple[str, ...] = ()
        self.passwords: tuple[str, ...] = ()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets or self.passwords:
            scrub(record, self.secrets, self.passwords)
        return True


REDACT = _Redact()
_LOCK = threading.Lock()
_attached = [0]  # how many loggers existed when the filter was last put on them


def remember(secret: str | None) -> None:
    """Redact `secret` from every later record of metis's loggers (see module doc)."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return
    _remember(secret, "secrets")


def remember_password(password: str | None) -> None:
    """Redact a store password, of any length, from every later record (see module doc)."""
    if password:
        _remember(password, "passwords")


def _remember(secret: str, kind: str) -> None:
    loggers = logging.Logger.manager.loggerDict
    if secret in getattr(REDACT, kind) and len(loggers) == _attached[0]:
        return
    with _LOCK:
        if secret not in getattr(REDACT, kind):
            setattr(REDACT, kind, (*getattr(REDACT, kind), secret))
        for name in _LOGGERS:
            logging.getLogger(name)
        for name, logger in list(loggers.items()):
            if not isinstance(logger, logging.Logger) or name.partition(".")[0] not in _LOGGERS:
                continue
            if REDACT not in logger.filters:
                logger.addFilter(REDACT)
        _attached[0] = len(loggers)


def redact_passwords(text: str, passwords: tuple[str, ...]) -> str:
    """`text` without the passwords: each replaced where it stands, or, when shorter than a
    key's minimum, where it is quoted whole (see module doc)."""
    for password in passwords:
        if password not in text:
            continue
        if len(password) >= MIN_SECRET_CHARS:
            text = text.replace(password, REDACTED)
        else:
            text = text.replace(f'"{password}"', f'"{REDACTED}"').replace(f"'{password}'", f"'{REDACTED}'")
    return text


def scrub(record: logging.LogRecord, secrets: tuple[str, ...], passwords: tuple[str, ...] = ()) -> None:
    """Replace each secret and password in the record's message, `extra` fields, traceback
    and stack."""

    def clean_text(text: str) -> str:
        return redact_passwords(redact_text(text, secrets), passwords)

    try:
        text = record.getMessage()
    except Exception:  # a record whose args do not fit: logging reports it when it is emitted
        return
    clean = clean_text(text)
    if clean != text:
        record.msg, record.args = clean, ()
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        # Formatted here, as a handler's Formatter would, which then uses this text.
        record.exc_text = clean_text(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = clean_text(record.stack_info)
    for name, value in list(vars(record).items()):
        if name in _STANDARD or isinstance(value, int | float | bool | None):
            continue
        text = value if isinstance(value, str) else repr(value)
        clean = clean_text(text)
        if clean != text:  # a container holding the key becomes its redacted text
            setattr(record, name, clean)


_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
"""A record's own attributes; any other was given as `extra=`."""


__all__ = ["REDACT", "redact_passwords", "remember", "remember_password", "scrub"]
