"""file_ref media stay inside the session workspace, whatever the filesystem holds
(issue 17, item 2): one open, checked, read from the same descriptor, size-capped."""

from __future__ import annotations

import base64
import contextlib
import os
import threading
import time
from pathlib import Path

import pytest
from metis import adapters
from metis.adapters._kit.base import AdapterOptions
from metis.errors import WorkspaceError
from metis.ids import ToolIdMap
from metis.workspace import DEFAULT_MAX_MEDIA_BYTES, MediaBlock, inline_base64, read_workspace_file
from metis_schema.v3 import Message

from tests.support.messages import build_message

SECRET = b"outside the workspace"
INSIDE = b"inside the workspace"
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "gemini": "gemini:gemini-2.5-flash",
    "openrouter": "openrouter:openai/gpt-5-mini",
    "ollama": "ollama:gemma3-4b",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.png").write_bytes(INSIDE)
    (tmp_path / "secret.png").write_bytes(SECRET)
    return root


def test_a_file_inside_the_workspace_is_read(ws: Path) -> None:
    assert read_workspace_file("sub/a.png", ws) == INSIDE
    assert read_workspace_file("sub/../sub/./a.png", ws) == INSIDE


@pytest.mark.parametrize("path", ["../secret.png", "sub/../../secret.png", "/etc/passwd", ""])
def test_paths_climbing_out_are_refused(ws: Path, path: str) -> None:
    with pytest.raises(WorkspaceError):
        read_workspace_file(path, ws)


def test_a_hard_link_to_an_outside_file_is_refused(ws: Path) -> None:
    os.link(ws.parent / "secret.png", ws / "linked.png")
    with pytest.raises(WorkspaceError, match="hard link"):
        read_workspace_file("linked.png", ws)


@pytest.mark.parametrize("link", ["leak.png", "dir/secret.png"])
def test_symlinks_are_not_followed(ws: Path, link: str) -> None:
    (ws / "leak.png").symlink_to(ws.parent / "secret.png")
    (ws / "dir").symlink_to(ws.parent)
    with pytest.raises(WorkspaceError, match="symlink"):
        read_workspace_file(link, ws)


def test_a_path_swapped_for_a_symlink_never_leaks_the_outside_file(ws: Path) -> None:
    """The check and the read were two lookups of one name: swapping the file for a symlink
    between them read the outside file. Now one descriptor is checked and read."""
    stop = threading.Event()
    target, swap = ws / "sub" / "a.png", ws / "sub" / "swap"

    def swapper() -> None:
        while not stop.is_set():
            swap.symlink_to(ws.parent / "secret.png")
            os.replace(swap, target)
            swap.write_bytes(INSIDE)
            os.replace(swap, target)

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    seen: set[bytes] = set()
    deadline = time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline:
            with contextlib.suppress(WorkspaceError):
                seen.add(read_workspace_file("sub/a.png", ws))
    finally:
        stop.set()
        thread.join()
    assert SECRET not in seen


def test_a_file_over_the_size_cap_is_refused_without_reading_it(ws: Path) -> None:
    with open(ws / "huge.png", "wb") as handle:  # sparse: no disk used
        handle.truncate(DEFAULT_MAX_MEDIA_BYTES + 1)
    with pytest.raises(WorkspaceError, match="limit"):
        read_workspace_file("huge.png", ws)
    (ws / "small.png").write_bytes(b"x" * 100)
    with pytest.raises(WorkspaceError, match="limit is 99"):
        read_workspace_file("small.png", ws, max_bytes=99)
    assert read_workspace_file("small.png", ws, max_bytes=100) == b"x" * 100


@pytest.mark.parametrize(
    "path",
    ["sub/a\x00.png", "x" * 5000, "sub/" + "y" * 300 + ".png", "sub"],
    ids=["nul", "over-long", "long-component", "directory"],
)
def test_bad_paths_get_typed_errors(ws: Path, path: str) -> None:
    with pytest.raises(WorkspaceError):
        read_workspace_file(path, ws)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "pipe.png")
    with pytest.raises(WorkspaceError, match="regular file"):
        read_workspace_file("pipe.png", ws)


def _image_message(path: str) -> Message:
    image = {"type": "image", "source": {"kind": "file_ref", "data": path}, "media_type": "image/png"}
    return build_message(
        "user", [image], session_id="s", id="01HZ0000000000000000000001", created_at="2026-01-01T00:00:00Z"
    )


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_every_adapter_refuses_a_hard_linked_file_ref(ws: Path, provider: str) -> None:
    os.link(ws.parent / "secret.png", ws / "linked.png")
    options = AdapterOptions(model=MODELS[provider], session_id="s", tool_ids=ToolIdMap("s"), workspace=ws)
    with pytest.raises(WorkspaceError, match="hard link"):
        adapters.get(provider).to_wire([_image_message("linked.png")], [], options)


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_every_adapter_applies_the_configured_size_cap(ws: Path, provider: str) -> None:
    options = AdapterOptions(
        model=MODELS[provider], session_id="s", tool_ids=ToolIdMap("s"), workspace=ws, max_media_bytes=4
    )
    with pytest.raises(WorkspaceError, match="limit is 4"):
        adapters.get(provider).to_wire([_image_message("sub/a.png")], [], options)
    wide = AdapterOptions(model=MODELS[provider], session_id="s", tool_ids=ToolIdMap("s"), workspace=ws)
    assert base64.b64encode(INSIDE).decode() in str(
        adapters.get(provider).to_wire([_image_message("sub/a.png")], [], wide)
    )


# --- every kind of media block: one contained, capped read (metis.workspace.inline_base64) --------------

MEDIA_KINDS = {
    "image": "image/png",
    "audio": "audio/wav",
    "video": "video/mp4",
    "document": "application/pdf",
}


def _block(kind: str, source_kind: str, data: str) -> MediaBlock:
    from pydantic import TypeAdapter

    doc = {"type": kind, "source": {"kind": source_kind, "data": data}, "media_type": MEDIA_KINDS[kind]}
    if source_kind == "file_id":
        doc["source"]["provider"] = "openai"  # type: ignore[index]
    adapter: TypeAdapter[MediaBlock] = TypeAdapter(MediaBlock)
    return adapter.validate_python(doc)


@pytest.mark.parametrize("kind", sorted(MEDIA_KINDS))
def test_every_media_kind_reads_its_file_ref_contained_and_capped(ws: Path, kind: str) -> None:
    assert inline_base64(_block(kind, "file_ref", "sub/a.png"), ws) == base64.b64encode(INSIDE).decode()
    os.link(ws.parent / "secret.png", ws / "linked.bin")
    with pytest.raises(WorkspaceError, match="hard link"):
        inline_base64(_block(kind, "file_ref", "linked.bin"), ws)
    (ws / "out").symlink_to(ws.parent)
    with pytest.raises(WorkspaceError, match="symlink"):
        inline_base64(_block(kind, "file_ref", "out/secret.png"), ws)
    with pytest.raises(WorkspaceError, match="escapes"):
        inline_base64(_block(kind, "file_ref", "../secret.png"), ws)
    with pytest.raises(WorkspaceError, match="limit is 4"):
        inline_base64(_block(kind, "file_ref", "sub/a.png"), ws, max_bytes=4)
    with pytest.raises(WorkspaceError, match="needs a session workspace"):
        inline_base64(_block(kind, "file_ref", "sub/a.png"), None)


@pytest.mark.parametrize("kind", sorted(MEDIA_KINDS))
def test_inline_and_by_reference_sources_are_not_read(ws: Path, kind: str) -> None:
    data = base64.b64encode(b"inline").decode()
    assert inline_base64(_block(kind, "base64", data), None) == data
    assert inline_base64(_block(kind, "url", "https://example.com/x"), ws) is None
    assert inline_base64(_block(kind, "file_id", "file-123"), ws) is None
