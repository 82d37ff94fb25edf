"""Images on the wire: base64 of an image block (file_refs read through `metis.workspace`,
which keeps them inside the session workspace), data URLs both ways, and the media type of
an image given only by URL. Every writer and importer that carries images asks these."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from urllib.parse import urlparse

from metis_schema.v3 import ImageBlock

from ...errors import WireFormatError
from ...workspace import inline_base64
from .options import AdapterOptions

_DATA_URL = re.compile(r"^data:(?P<media>[\w.+-]+/[\w.+-]+)(?:;[\w=.+-]+)*;base64,(?P<data>.*)$", re.DOTALL)


def image_base64(block: ImageBlock, options: AdapterOptions) -> str | None:
    """Base64 bytes of an image, reading file_refs from the workspace (contained and
    size-capped by `metis.workspace`); None for URL images."""
    return inline_base64(block, options.workspace, max_bytes=options.max_media_bytes)


def data_url(media_type: str, b64: str) -> str:
    """`data:<media>;base64,<data>`."""
    return f"data:{media_type};base64,{b64}"


def parse_data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a base64 data URL, or None for other URLs."""
    match = _DATA_URL.match(url)
    if match is None:
        return None
    data = match["data"]
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WireFormatError(f"data URL holds invalid base64: {exc}") from exc
    return match["media"], data


def url_image_media_type(url: str) -> str:
    """The media type of an image given only by URL (the wire says none): guessed from the
    path's extension, else JPEG, the most common."""
    guessed = mimetypes.guess_type(urlparse(url).path)[0]
    return guessed if guessed and guessed.startswith("image/") else "image/jpeg"
