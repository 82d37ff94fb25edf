"""Where the store lives when nobody says: one file per user, movable by METIS_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

FILE_NAME = "metis.sqlite3"
HOME_ENV = "METIS_HOME"


def metis_home() -> Path:
    """`$METIS_HOME` if set, else the per-user data directory (platformdirs) for "metis"."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser()
    return Path(user_data_dir("metis", appauthor=False))


def default_path() -> Path:
    """The default database file: `metis_home() / "metis.sqlite3"`."""
    return metis_home() / FILE_NAME


__all__ = ["FILE_NAME", "HOME_ENV", "default_path", "metis_home"]
