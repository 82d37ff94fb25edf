"""Times as recorded traffic writes them, read as UTC: ISO 8601 / RFC 3339 text (HAR, VCR,
Ollama's `created_at`) and Unix seconds (Chat's `created`, Responses' `created_at`).

Untrusted input: anything that is not such a time is None, never an exception."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def moment(value: Any) -> datetime | None:
    """An ISO 8601 time as UTC (one without an offset is read as UTC, as HTTP recorders
    write them); None for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def unix_moment(value: Any) -> datetime | None:
    """Unix seconds as UTC; None for anything else (a bool, a number out of range)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e11:
        return None
    return datetime.fromtimestamp(value, UTC)


READERS = {"iso": moment, "unix": unix_moment}
"""How a provider writes a time (the name a facts row uses) -> its reader."""

__all__ = ["READERS", "moment", "unix_moment"]
