"""Pictures (a photo, a picture sent as a file, a sticker): made ready for a model that sees.

:class:`ImageReader` opens the fetched bytes with Pillow in a child process
(:func:`board.media.isolate.ready_isolated`: the event loop is never blocked by decoding, the
daemon's memory never holds the decoded pixels, and ``media.image_memory_mb`` is the child's
ceiling; at most :data:`MAX_PARALLEL` at once, strangers' pictures in only one of them, so the owner's
and allowed people's are read at once whatever strangers send; a picture that waits
``media.extract_timeout_s`` for a reader is told to be sent again), refuses what it must (a
decompression bomb: more pixels than
``media.image_max_pixels`` or Pillow's own ``Image.MAX_IMAGE_PIXELS`` guard; a damaged file;
something that is not a picture) with one sentence for the sender, and stores one
model-ready copy in the blob store that every provider accepts, whichever model of a
fallback chain ends up answering:

- the longer side at most ``media.image_max_side`` (default 1568 px: Anthropic's recommended
  size; larger pictures are scaled down by the APIs anyway and cost more) and never over
  8000 px (Anthropic refuses larger);
- at most :data:`MAX_MODEL_BYTES` (Anthropic takes 5 MB of base64 per image, i.e. 3.75 MB
  of bytes; OpenAI 20 MB; Gemini 20 MB per request);
- JPEG, PNG or WebP (the formats all three accept; Gemini takes no GIF): a JPEG, PNG or
  static WebP that already fits is kept byte for byte; anything else is re-encoded (JPEG,
  or PNG when it has transparency, WebP when a PNG would be too large); an animated GIF or
  WebP is shown as its first frame; a phone photo is turned upright (EXIF orientation).

The attachment's ``blob`` and ``mime`` then name that copy, and ``derived`` says what is
known without looking ("a 4000x3000 JPEG picture, 2.1 MB (shown to the model as 1568x1176
JPEG)"): the offline model and a model that cannot see use it; a model that sees gets the
picture itself (:meth:`board.media.service.MediaService.turn_input`). Reading one picture
gives up after ``media.extract_timeout_s``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import logging
import signal
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob, size_text
from board.media.isolate import child_answer, child_main, run_child
from board.media.problems import MediaProblem, Problem
from board.media.understand import UnderstandContext

if TYPE_CHECKING:  # Pillow is imported by the picture reader's child, not by the daemon that starts it
    from PIL import Image

__all__ = ["MAX_MODEL_BYTES", "MAX_MODEL_SIDE", "MAX_PARALLEL", "ImageReader", "ReadyImage", "describe",
           "make_ready", "ready_isolated", "too_large_picture"]

log = logging.getLogger("sabha.media")
_STDERR_KEEP = 2000

#: The largest model-ready picture: Anthropic's 5 MB base64 limit per image, as bytes.
MAX_MODEL_BYTES = 3_750_000
#: No provider takes a longer side than this (Anthropic refuses more than 8000 px).
MAX_MODEL_SIDE = 8000
#: What every provider accepts as it is (Pillow's format name -> MIME type).
_ACCEPTED = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
#: Picture readers (child processes) at once, each up to ``media.image_memory_mb``.
MAX_PARALLEL = 2
#: Modes whose pictures carry transparency worth keeping.
_ALPHA_MODES = frozenset({"RGBA", "LA", "PA", "RGBa", "La"})


@dataclass(frozen=True)
class ReadyImage:
    """A picture as a model gets it (``data`` None: the file as it was sent), and what it was."""

    data: bytes | None
    mime: str
    width: int
    height: int
    original_format: str
    original_width: int
    original_height: int
    frames: int = 1

    @property
    def changed(self) -> bool:
        """True when the model gets other pixels or another format than what was sent."""
        return (self.width, self.height) != (self.original_width, self.original_height) \
            or _ACCEPTED.get(self.original_format) != self.mime


def describe(ready: ReadyImage, size: int, kind: MediaKind) -> str:
    """What is known of a picture without looking: size in pixels, format, bytes, frames."""
    noun = "sticker" if kind is MediaKind.STICKER else "picture"
    text = f"a {ready.original_width}x{ready.original_height} {ready.original_format} {noun}, {size_text(size)}"
    if ready.frames > 1:
        text += f", animated ({ready.frames} frames; the model is shown the first)"
    if ready.changed:
        fmt = ready.mime.removeprefix("image/").upper()
        text += f" (shown to the model as {ready.width}x{ready.height} {fmt})"
    return text


#: The only decoders a stranger's bytes reach: Pillow's others include EPS, which runs Ghostscript
#: (with the daemon's environment) on whatever a sender declared as a picture.
PICTURE_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "BMP")


def open_picture(path: Path) -> Image.Image:
    """``path`` opened by one of :data:`PICTURE_FORMATS` only (UnidentifiedImageError for anything else)."""
    from PIL import Image

    return Image.open(path, formats=PICTURE_FORMATS)


def make_ready(path: Path, *, max_side: int, max_pixels: int, label: str = "the picture") -> ReadyImage:
    """The model-ready copy of the picture at ``path`` (blocking: run it in a thread); raises
    :class:`MediaProblem` for a bomb, a damaged file or something that is not a picture."""
    from PIL import Image, UnidentifiedImageError

    try:
        with open_picture(path) as img:
            return _ready(img, path, max_side=min(max_side, MAX_MODEL_SIDE), max_pixels=max_pixels, label=label)
    except Image.DecompressionBombError:
        raise MediaProblem(Problem.UNREADABLE, f"{label} is too large to open safely "
                                               "(more pixels than Pillow allows)") from None
    except UnidentifiedImageError:
        raise MediaProblem(Problem.UNSUPPORTED, f"{label} could not be read: it is not a picture in a "
                                               "format I know (send a JPEG, PNG or WebP)") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # Pillow's ways of saying "damaged"
        raise MediaProblem(Problem.UNREADABLE, f"{label} could not be read: the file is damaged or "
                                               f"incomplete ({_reason(exc)})") from None


def _ready(img: Image.Image, path: Path, *, max_side: int, max_pixels: int, label: str) -> ReadyImage:
    from PIL import Image
    width, height = img.size
    fmt = (img.format or "image").upper()
    if width < 1 or height < 1:
        raise MediaProblem(Problem.UNREADABLE, f"{label} could not be read: it has no pixels")
    if width * height > max_pixels:
        raise MediaProblem(Problem.UNREADABLE, f"{label} is too large to open safely: {width}x{height} is "
                                               f"{width * height:,} pixels, over the limit of {max_pixels:,} "
                                               "(media.image_max_pixels)")
    frames = int(getattr(img, "n_frames", 1) or 1)
    size = path.stat().st_size
    orientation = _orientation(img)
    upright = orientation is None
    fits = max(width, height) <= max_side and size <= MAX_MODEL_BYTES
    if fmt in _ACCEPTED and frames == 1 and upright and fits:
        img.load()  # decodes the whole picture: a damaged one fails here, not at the provider
        return ReadyImage(None, _ACCEPTED[fmt], width, height, fmt, width, height)
    img.seek(0)  # an animated picture: its first frame
    alpha = img.mode in _ALPHA_MODES or (img.mode == "P" and "transparency" in img.info)
    mode = "RGBA" if alpha else "RGB"
    frame = img if img.mode == mode else img.convert(mode)
    frame.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)  # a JPEG is decoded at a fraction of its size
    if orientation is not None:
        frame = frame.transpose(_upright(orientation))
    data, mime, frame = _encode(frame, alpha)
    return ReadyImage(data, mime, frame.width, frame.height, fmt, width, height, frames)


def _upright(orientation: int) -> Image.Transpose:
    """How a picture is turned upright for an EXIF orientation but 1 (ImageOps.exif_transpose's table)."""
    from PIL import Image

    return {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
            5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
            8: Image.Transpose.ROTATE_90}[orientation]


#: The EXIF orientations that need turning (1 is upright).
_TURNED = frozenset(range(2, 9))


def _orientation(img: Image.Image) -> int | None:
    try:
        value = img.getexif().get(0x0112)  # Orientation
    except Exception:  # noqa: BLE001 - a damaged EXIF block must not stop the picture
        return None
    return value if isinstance(value, int) and value in _TURNED else None


def _encode(frame: Image.Image, alpha: bool) -> tuple[bytes, str, Image.Image]:
    """``frame`` as JPEG (PNG or WebP with transparency) of at most :data:`MAX_MODEL_BYTES`,
    lowering the quality, then the size, until it fits."""
    from PIL import Image

    if alpha:
        data = _save(frame, "PNG", optimize=True)
        if len(data) <= MAX_MODEL_BYTES:
            return data, "image/png", frame
    while True:
        for quality in (85, 70, 50):
            data = _save(frame, "WEBP", quality=quality) if alpha else _save(frame, "JPEG", quality=quality,
                                                                              optimize=True)
            if len(data) <= MAX_MODEL_BYTES:
                return data, "image/webp" if alpha else "image/jpeg", frame
        frame = frame.resize((max(1, frame.width * 3 // 4), max(1, frame.height * 3 // 4)),
                             Image.Resampling.LANCZOS)


def _save(frame: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    frame.save(out, fmt, **options)
    return out.getvalue()


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:100]
    return text or type(exc).__name__


async def ready_isolated(path: Path, out: Path, *, max_side: int, max_pixels: int, label: str, timeout_s: float,
                         memory_bytes: int) -> ReadyImage:
    """:func:`make_ready` in a child process (``python -m board.media.images``) of at most
    ``memory_bytes`` of address space, killed after ``timeout_s``; a re-encoded copy is written to
    ``out`` (``data`` is then its bytes). Raises :class:`MediaProblem` (a bomb, damaged, not a
    picture, too large to decode)."""
    job = {"path": str(path), "out": str(out), "label": label, "max_side": max_side, "max_pixels": max_pixels,
           "cpu_s": int(timeout_s) + 2, "memory": memory_bytes}
    late = f"{label} took too long to read (over {timeout_s:g} s); send a smaller picture or a screenshot"
    raw, err, code = await run_child("board.media.images", job, timeout_s, late)
    message = child_answer(raw)
    if message.get("ok") is True:
        fields = dict(message["ready"])
        fields["data"] = await asyncio.to_thread(out.read_bytes) if fields.pop("written") else None
        return ReadyImage(**fields)
    if message.get("problem") in set(Problem):
        raise MediaProblem(Problem(message["problem"]), str(message["text"]))
    raise _child_failed(message, err, code, label, memory_bytes, late)


def _child_failed(message: dict[str, Any], err: bytes, code: int | None, label: str, memory_bytes: int,
                  late: str) -> BaseException:
    """What a picture child that gave no result means: out of memory (its MemoryError, or killed by SIGKILL
    without a word: the kernel's OOM killer) is "too large"; a full disk writing the copy is the OSError the
    media service parks the message on; the CPU limit is "too long"; anything else is our error (ERROR)."""
    stderr = err.decode("utf-8", "replace")[-_STDERR_KEEP:].strip()
    if message.get("memory") is True or (not message and code == -signal.SIGKILL):
        log.warning("media: %s needed more memory than a picture may use (%d MB, media.image_memory_mb); the "
                    "sender was told it is too large", label, memory_bytes // 2**20)
        return MediaProblem(Problem.UNREADABLE, too_large_picture(label, memory_bytes))
    if isinstance(message.get("oserror"), int):
        log.error("media: reading %s: the picture reader could not write its copy: %s", label, message.get("text"))
        return OSError(int(message["oserror"]), f"writing the model-ready copy of {label}: {message.get('text')}")
    if not message and code == -signal.SIGXCPU:
        log.warning("media: reading %s: the picture reader used up its CPU time", label)
        return MediaProblem(Problem.UNREADABLE, late)
    log.error("media: reading %s: the picture reader failed (exit code %s): %s", label, code,
              message.get("error") or stderr or "no answer")
    return MediaProblem(Problem.UNREADABLE, f"{label} could not be read (an error on our side; it was logged)")


def too_large_picture(label: str, memory_bytes: int) -> str:
    """What the sender of a picture that needs more memory than a reader may use is told."""
    return (f"{label} is too large to read: decoding it needs more than the {memory_bytes // 2**20} MB a "
            "picture may use; send a smaller picture or a screenshot")


def _child_job(job: dict[str, Any]) -> dict[str, Any]:
    label = str(job["label"])
    try:
        ready = make_ready(Path(job["path"]), max_side=int(job["max_side"]), max_pixels=int(job["max_pixels"]),
                           label=label)
    except MediaProblem as exc:
        return {"problem": exc.problem.value, "text": exc.text}
    except MemoryError:
        return {"memory": True}
    fields = asdict(ready)
    data = fields.pop("data")
    if data is not None:
        try:
            Path(job["out"]).write_bytes(data)
        except OSError as exc:  # the data dir's disk: the daemon parks the message and retries it
            return {"oserror": exc.errno or errno.EIO, "text": str(exc)}
    return {"ok": True, "ready": {**fields, "written": data is not None}}


def main() -> int:
    """The picture reader child (:func:`board.media.isolate.child_main`)."""
    return child_main(_child_job)


class ImageReader:
    """Pictures and stickers -> a model-ready copy and an honest description (module docstring)."""

    kinds = frozenset({MediaKind.IMAGE, MediaKind.STICKER})

    def __init__(self) -> None:
        self._slots = asyncio.Semaphore(MAX_PARALLEL)
        #: strangers' pictures (public mode) hold at most this many readers: the rest stay free for the
        #: owner and allowed people, whatever strangers send
        self._strangers = asyncio.Semaphore(MAX_PARALLEL - 1)

    @contextlib.asynccontextmanager
    async def _reader(self, public: bool, label: str, wait_s: float) -> AsyncIterator[None]:
        """One of the :data:`MAX_PARALLEL` readers (a stranger: one of theirs), waited for at most ``wait_s``."""
        async with contextlib.AsyncExitStack() as held:
            try:
                async with asyncio.timeout(wait_s):
                    if public:
                        await held.enter_async_context(self._strangers)
                    await held.enter_async_context(self._slots)
            except TimeoutError:
                log.warning("media: %s waited %g s for a picture reader (all busy); the sender was asked to send "
                            "it again", label, wait_s)
                raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be read now: many pictures are being "
                                                        "read; please send it again in a few minutes") from None
            yield

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        settings = ctx.settings
        label = attachment.label
        out = ctx.blobs.root / f".part-image-{uuid.uuid4().hex}"  # a stray one is pruned with the .part- files
        try:
            async with self._reader(ctx.envelope.is_public, label, settings.extract_timeout_s):
                ready = await ready_isolated(blob.path, out, max_side=settings.image_max_side,
                                             max_pixels=settings.image_max_pixels, label=label,
                                             timeout_s=settings.extract_timeout_s,
                                             memory_bytes=settings.image_memory_bytes)
        except MediaProblem as exc:
            if attachment.kind is MediaKind.STICKER and exc.problem is Problem.UNSUPPORTED:
                # Telegram's animated (TGS: gzipped Lottie) and video (WEBM) stickers
                raise MediaProblem(Problem.UNSUPPORTED, f"{label} is animated; I can only see still "
                                                        "stickers") from None
            raise
        finally:
            with contextlib.suppress(OSError):
                out.unlink()
        stored = blob if ready.data is None else await asyncio.to_thread(ctx.blobs.put, ready.data, label)
        return attachment.with_(blob=stored.sha256, mime=ready.mime,
                                derived=describe(ready, blob.size, attachment.kind))


if __name__ == "__main__":
    raise SystemExit(main())
