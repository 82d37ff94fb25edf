"""Reading `file_ref` media from the session workspace, contained.

A `file_ref` is a path relative to the session workspace, and a conversation may come
from anywhere (an import, another process, a model that wrote the path itself), so the
path is hostile until proved otherwise. Checking the path and then reading it are two
steps an attacker can race (swap a component for a symlink in between), and a path check
cannot see a hard link to a file outside. So the file is opened once, one component at a
time from a descriptor of the workspace root, refusing symlinks at every step
(`O_NOFOLLOW`); what was opened is then checked (a regular file, one link, within the size
cap) and read from that same descriptor. Nothing is looked up by name twice.

Symlinks inside the workspace are refused even when they point inside it: following them
safely would mean re-doing the kernel's resolution by hand, and a file_ref can always
name the real file instead.

Every kind of media block (image, and v2's audio, video and document) carries its bytes
the same way, so `inline_base64` is the one function an adapter calls for any of them:
the same containment and the same size cap whatever the block is.
"""

from __future__ import annotations

import base64
import errno
import os
import posixpath
import stat
from pathlib import Path

from metis_schema.v3 import AudioBlock, DocumentBlock, ImageBlock, MediaSourceKind, VideoBlock

from .errors import WorkspaceError

DEFAULT_MAX_MEDIA_BYTES = 20 * 1024 * 1024
"""Largest file_ref read by default: the providers' own inline-media ceiling (OpenAI and
Gemini accept at most 20 MB of inline image data; Anthropic's 5 MB image limit is lower,
and its server says so). A bigger file would be refused upstream anyway, after the client
had read it whole into memory and base64-encoded it."""

MAX_PATH_CHARS = 4096
"""Longest file_ref path accepted (Linux PATH_MAX): longer ones get a typed error here
instead of an OSError from the kernel."""

_NAME_MAX = 255

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = _ROOT_FLAGS | _NOFOLLOW
_FILE_FLAGS = (
    os.O_RDONLY
    | _NOFOLLOW
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in the workspace must not block the open
    | getattr(os, "O_NOCTTY", 0)
)


def _components(path: str) -> list[str]:
    """The path's components after the lexical checks: relative, no NUL, bounded, and not
    climbing out (`a/../b` is fine, `../b` is not)."""
    if not isinstance(path, str) or not path:
        raise WorkspaceError("file_ref path is empty")
    if "\x00" in path:
        raise WorkspaceError(f"file_ref {path[:200]!r} contains a NUL byte")
    if len(path) > MAX_PATH_CHARS:
        raise WorkspaceError(f"file_ref path is {len(path)} characters long; the limit is {MAX_PATH_CHARS}")
    if posixpath.isabs(path) or Path(path).is_absolute():
        raise WorkspaceError(f"file_ref {path!r} is absolute; it must be relative to the workspace")
    normal = posixpath.normpath(path.replace("\\", "/") if os.sep == "\\" else path)
    parts = [] if normal == "." else normal.split("/")
    if not parts or parts[0] == "..":
        raise WorkspaceError(f"file_ref {path!r} escapes the workspace")
    if any(len(part) > _NAME_MAX for part in parts):
        raise WorkspaceError(f"file_ref {path[:200]!r} has a component longer than {_NAME_MAX} characters")
    return parts


def _refused(path: str, root: Path, exc: OSError) -> WorkspaceError:
    if exc.errno == errno.ENOENT:
        return WorkspaceError(f"file_ref {path!r} does not exist in the workspace {root}")
    if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
        return WorkspaceError(
            f"file_ref {path!r} passes through a symlink or a non-directory in the workspace {root}"
        )
    return WorkspaceError(f"file_ref {path!r} cannot be opened in the workspace {root}: {exc.strerror}")


def _open_inside(path: str, root: Path) -> int:
    """A read descriptor of `path` opened under `root` without following any symlink."""
    parts = _components(path)
    try:
        fd = os.open(root, _ROOT_FLAGS)  # the root itself may sit behind a symlink: it was resolved
    except OSError as exc:
        raise WorkspaceError(f"the workspace {root} cannot be opened: {exc.strerror}") from exc
    try:
        for part in parts[:-1]:
            next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        return os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _refused(path, root, exc) from exc
    finally:
        os.close(fd)


def read_workspace_file(
    path: str, workspace: Path | None, *, max_bytes: int = DEFAULT_MAX_MEDIA_BYTES
) -> bytes:
    """The bytes of the file a `file_ref` names, read from the one descriptor that was
    checked to be a regular file inside the workspace with no other hard link."""
    if workspace is None:
        raise WorkspaceError(
            f"file_ref {path!r} needs a session workspace", hint="set AdapterOptions.workspace"
        )
    root = workspace.resolve()
    fd = _open_inside(path, root)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WorkspaceError(f"file_ref {path!r} is not a regular file in the workspace {root}")
        if info.st_nlink > 1:
            # a hard link is the same inode under two names, and the other may lie outside
            raise WorkspaceError(
                f"file_ref {path!r} has {info.st_nlink} hard links; a workspace file must have one"
            )
        if info.st_size > max_bytes:
            raise _too_big(path, info.st_size, max_bytes)
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - size)):  # +1: a file that grew is caught
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise _too_big(path, size, max_bytes)
        return b"".join(chunks)
    except OSError as exc:
        raise WorkspaceError(f"file_ref {path!r} cannot be read: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _too_big(path: str, size: int, limit: int) -> WorkspaceError:
    return WorkspaceError(
        f"file_ref {path!r} holds at least {size} bytes; the limit is {limit}",
        hint="raise AdapterOptions.max_media_bytes if the provider accepts it",
    )


def workspace_file_base64(
    path: str, workspace: Path | None, *, max_bytes: int = DEFAULT_MAX_MEDIA_BYTES
) -> str:
    """`read_workspace_file`, base64-encoded (how every provider carries inline media)."""
    return base64.b64encode(read_workspace_file(path, workspace, max_bytes=max_bytes)).decode("ascii")


MediaBlock = ImageBlock | AudioBlock | VideoBlock | DocumentBlock
"""Every block whose bytes a MediaSource carries."""


def inline_base64(
    block: MediaBlock, workspace: Path | None, *, max_bytes: int = DEFAULT_MAX_MEDIA_BYTES
) -> str | None:
    """The base64 bytes a provider is sent inline for a media block of any kind: base64 data
    as it is, a file_ref read from the workspace (contained and size-capped, as
    `read_workspace_file`); None for a URL or a provider's file id, which travel by
    reference (the adapter decides what its provider takes)."""
    source = block.source
    if source.kind == MediaSourceKind.base64:
        return source.data
    if source.kind == MediaSourceKind.file_ref:
        return workspace_file_base64(source.data, workspace, max_bytes=max_bytes)
    return None


__all__ = [
    "DEFAULT_MAX_MEDIA_BYTES",
    "MAX_PATH_CHARS",
    "MediaBlock",
    "inline_base64",
    "read_workspace_file",
    "workspace_file_base64",
]
