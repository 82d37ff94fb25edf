"""Media content parts of Chat Completions, both directions, as the dialect row allows.

Canonical image, document, audio and video blocks <-> `image_url`, `file`, `input_audio`
and `video_url` parts. `MediaWriter` builds the parts of a request (USER messages, and
images in tool messages where the row has `tool_result_images`); `MediaReader` reads them
back from a recorded request. What a row does not take is dropped with the §7.3 WARN
(through the caller's `drop`), never rendered as text.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlparse

from metis_schema.v3 import (
    AdapterCapabilities,
    AudioBlock,
    DocumentBlock,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    VideoBlock,
)
from pydantic import ValidationError

from ...errors import WireFormatError
from ...workspace import workspace_file_base64
from .._kit.base import AdapterOptions
from .._kit.facts import ProviderFacts
from .._kit.images import data_url, image_base64, parse_data_url, url_image_media_type
from .._kit.media_admission import MediaBlock, admit, document_losses
from .from_wire import not_canonical
from .wire import Fields, FilePart, InputAudio, Part, VideoUrl

BlockDrop = Callable[[Message, int, str, str], None]
"""`drop(message, index, block_type, reason)`: the writer's §7.3 drop."""
FieldDrop = Callable[[str, Any, str], None]
"""`drop(path, value, reason)`: the importer's listed drop."""


class MediaWriter:
    """Media blocks -> content parts for one request (target model, options, dialect row)."""

    def __init__(
        self,
        name: str,
        facts: ProviderFacts,
        options: AdapterOptions,
        model_id: str,
        caps: AdapterCapabilities,
        *,
        drop: BlockDrop,
    ) -> None:
        self.name = name
        self.facts = facts
        self.options = options
        self.model_id = model_id
        self.caps = caps
        self.drop = drop

    def admitted(self, block: MediaBlock, message: Message, index: int) -> bool:
        """Whether the target model and provider take `block` at all (`media_admission.admit`);
        dropped with the WARN when not."""
        refused = admit(block, self.caps, self.model_id, self.facts)
        if refused is not None:
            self.drop(message, index, block.type, refused)
        return refused is None

    def image(self, block: ImageBlock, message: Message, index: int) -> dict[str, Any] | None:
        if not self.admitted(block, message, index):
            return None
        if block.source.kind == MediaSourceKind.file_id:
            self.drop(message, index, "image", "image_url parts take no file ids")
            return None
        b64 = image_base64(block, self.options)
        url = block.source.data if b64 is None else data_url(block.media_type, b64)
        return {"type": "image_url", "image_url": {"url": url}}

    def document(self, block: DocumentBlock, message: Message, index: int) -> dict[str, Any] | None:
        """A `file` part: inline bytes as a data URL with a filename (OpenAI requires one), a
        URL where the dialect takes one, or this provider's own file id."""
        if not self.admitted(block, message, index):
            return None
        if block.media_type not in self.facts.file_media_types:
            self.drop(message, index, "document", f"{self.name} file parts do not take {block.media_type}")
            return None
        source = block.source
        if source.kind == MediaSourceKind.file_id:
            file: dict[str, Any] = {"file_id": source.data}
        elif source.kind == MediaSourceKind.url and not self.facts.file_urls:
            self.drop(message, index, "document", f"{self.name} file parts take the bytes, not a URL")
            return None
        else:
            data = (
                source.data
                if source.kind == MediaSourceKind.url
                else data_url(block.media_type, self.b64(source))
            )
            file = {"filename": block.title or "document", "file_data": data}
        carried = () if "file_id" in file else {"title"}  # the title is the filename of sent bytes
        document_losses(block, message, index, adapter=self.name, part="a file part", carried=carried)
        return {"type": "file", "file": file}

    def audio(self, block: AudioBlock, message: Message, index: int) -> dict[str, Any] | None:
        """An `input_audio` part: base64 bytes and the format the dialect names the media type."""
        if not self.admitted(block, message, index):
            return None
        audio_format = self.facts.audio_formats.get(block.media_type)
        if audio_format is None:
            self.drop(message, index, "audio", f"{self.name} input_audio does not take {block.media_type}")
            return None
        if block.source.kind in (MediaSourceKind.url, MediaSourceKind.file_id):
            self.drop(message, index, "audio", "input_audio takes base64 bytes only")
            return None
        return {
            "type": "input_audio",
            "input_audio": {"data": self.b64(block.source), "format": audio_format},
        }

    def video(self, block: VideoBlock, message: Message, index: int) -> dict[str, Any] | None:
        """A `video_url` part: the URL, or the bytes as a data URL."""
        if not self.admitted(block, message, index):
            return None
        if not self.facts.video_parts:
            self.drop(message, index, "video", f"{self.name} messages take no video")
            return None
        source = block.source
        if source.kind == MediaSourceKind.file_id:
            self.drop(message, index, "video", "video_url parts take no file ids")
            return None
        url = (
            source.data
            if source.kind == MediaSourceKind.url
            else data_url(block.media_type, self.b64(source))
        )
        return {"type": "video_url", "video_url": {"url": url}}

    def b64(self, source: MediaSource) -> str:
        """Base64 bytes of an inline or workspace (file_ref) source."""
        if source.kind == MediaSourceKind.file_ref:
            return workspace_file_base64(
                source.data, self.options.workspace, max_bytes=self.options.max_media_bytes
            )
        return source.data


class MediaReader:
    """Content parts of a recorded request -> media blocks (one import)."""

    def __init__(self, name: str, facts: ProviderFacts, drop: FieldDrop) -> None:
        self.name = name
        self.facts = facts
        self.drop = drop

    def document(self, file: FilePart, path: str) -> DocumentBlock:
        """A `file` part -> DocumentBlock: a data URL's bytes, a URL, or this provider's file id."""
        data = file.get("file_data")
        file_id = file.get("file_id")
        media_type = "application/pdf"  # the one type both dialects' file parts take
        if data is not None:
            try:
                parsed = parse_data_url(data)
            except WireFormatError as exc:
                raise WireFormatError(
                    exc.message, provider=self.name, path=f"{path}.file.file_data"
                ) from None
            if parsed is not None:
                media_type, b64 = parsed
                source = MediaSource(kind=MediaSourceKind.base64, data=b64)
            else:
                source = MediaSource(kind=MediaSourceKind.url, data=data)
        elif file_id is not None:
            source = MediaSource(kind=MediaSourceKind.file_id, data=file_id, provider=self.name)
        else:
            raise WireFormatError(
                "a file part has neither file_data nor file_id", provider=self.name, path=f"{path}.file"
            )
        title = file.get("filename") or None
        try:
            return DocumentBlock(type="document", source=source, media_type=media_type, title=title)
        except ValidationError as exc:
            raise not_canonical(exc, provider=self.name, path=path) from None

    def _source(self, url: str, path: str, guess: Callable[[str], str]) -> tuple[str, MediaSource]:
        """A part's URL (at `path`) as a media type and source: a data URL's own type and
        bytes, else the URL itself, its type `guess`ed from it."""
        try:
            parsed = parse_data_url(url)
        except WireFormatError as exc:
            raise WireFormatError(exc.message, provider=self.name, path=path) from None
        if parsed is not None:
            media_type, data = parsed
            return media_type, MediaSource(kind=MediaSourceKind.base64, data=data)
        return guess(url), MediaSource(kind=MediaSourceKind.url, data=url)

    def video(self, video: VideoUrl, path: str) -> VideoBlock:
        """A `video_url` part -> VideoBlock. A plain URL says no media type: guessed from
        its extension, else `video/mp4`, the most common (as image URLs are)."""
        media_type, source = self._source(video["url"], f"{path}.video_url.url", _video_media_type)
        try:
            return VideoBlock(type="video", source=source, media_type=media_type)
        except ValidationError as exc:
            raise not_canonical(exc, provider=self.name, path=path) from None

    def audio(self, audio: InputAudio, path: str) -> AudioBlock:
        """An `input_audio` part -> AudioBlock (the format named back as a media type)."""
        media_type = next((m for m, f in self.facts.audio_formats.items() if f == audio["format"]), None)
        if media_type is None:
            media_type = f"audio/{audio['format']}"
        try:
            return AudioBlock(
                type="audio",
                source=MediaSource(kind=MediaSourceKind.base64, data=audio["data"]),
                media_type=media_type,
            )
        except ValidationError as exc:
            raise not_canonical(exc, provider=self.name, path=path) from None

    def image(self, part: Part, path: str) -> ImageBlock:
        image_url = part.get("image_url")
        if image_url is None:
            raise WireFormatError("image_url has no url", provider=self.name, path=f"{path}.image_url")
        if isinstance(image_url, str):
            url = image_url
        else:
            url = image_url["url"]
            for key in sorted(image_url.keys() - {"url"}):
                value = cast(Fields, image_url)[key]
                self.drop(f"{path}.image_url.{key}", value, "no canonical place for this image field")
        media_type, source = self._source(url, f"{path}.image_url.url", url_image_media_type)
        try:
            return ImageBlock(type="image", source=source, media_type=media_type)
        except ValidationError as exc:
            raise not_canonical(exc, provider=self.name, path=path) from None


def _video_media_type(url: str) -> str:
    """A plain video URL's media type: guessed from its extension, else `video/mp4`."""
    guessed = mimetypes.guess_type(urlparse(url).path)[0]
    return guessed if guessed and guessed.startswith("video/") else "video/mp4"


__all__ = ["MediaReader", "MediaWriter"]
