"""Test-wide fixtures: no test touches a real user store, the network, or a real workspace."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metis.store import Store

from tests.support.store_support import BACKENDS, new_target
from tests.support.strategies import PNG_1PX


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Point METIS_HOME at a temporary directory for every test."""
    monkeypatch.setenv("METIS_HOME", str(tmp_path_factory.mktemp("metis-home")))
    yield


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A session workspace holding `img.png` (a 1x1 PNG) for file_ref images."""
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "img.png").write_bytes(base64.b64decode(PNG_1PX))
    return root


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store in the test's temporary directory, closed after the test."""
    with Store.open(tmp_path / "metis.sqlite3") as opened:
        yield opened


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of each backend: a SQLite file, a schema on a real PostgreSQL server
    (`store_support.new_target`)."""
    return new_target(request.param, tmp_path)


@pytest.fixture
def upstream() -> Iterator[Any]:
    """A scripted provider on loopback (`gateway_support.ScriptedUpstream`), closed after the test."""
    from tests.support.gateway_support import ScriptedUpstream

    server = ScriptedUpstream()
    yield server
    server.close()


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    """Where a gateway test keeps its SQLite store: a file in the test's temporary directory."""
    return str(tmp_path / "gateway.sqlite3")


@pytest.fixture
def gateway(upstream: Any, store_path: str) -> Iterator[Any]:
    """A gateway (`gateway_support.Gateway`) in front of `upstream`, storing at `store_path`, closed after the test."""
    from tests.support.gateway_support import Gateway

    served = Gateway(upstream, store_path)
    yield served
    served.close()
