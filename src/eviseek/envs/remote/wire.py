"""The remote-environment wire format: one JSON line, then the image bytes it describes.

A message body is ``<JSON>\\n<blob><blob>...``. The JSON (always one line: ``json.dumps`` escapes
newlines) carries the payload with every image replaced by a reference, plus ``"blobs"``: one
entry per blob with its byte count, its encoding and, for raw pixels, its shape. Images travel as
PNG (lossless, small; the default for real networks), raw RGB bytes (no encoding cost; best on
loopback) or JPEG (lossy, smallest; only when the client asks), never as base64 inside the JSON.

Only what an agent may see crosses the wire: depth and segmentation stay in the server, where the
environment grades visual support itself.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from eviseek.errors import EnvError
from eviseek.types import ActionSpec, Image, Observation, Question, StepResult

PROTOCOL_VERSION = 1
CONTENT_TYPE = "application/x-eviseek-env"
TOKEN_ENV = "EVISEEK_ENV_TOKEN"
"""Default name of the environment variable holding the shared secret (server and client)."""

ImageEncoding = Literal["png", "raw", "jpeg"]
ENCODINGS: tuple[str, ...] = ("png", "raw", "jpeg")
"""How images may travel: ``png`` (lossless, small), ``raw`` (no encoding cost, big) or ``jpeg``
(lossy, smallest; for slow links). A server that predates ``jpeg`` answers such a request in png,
which the client reads as well: every blob names its own encoding."""
LOSSLESS: tuple[str, ...] = ("png", "raw")
JPEG_QUALITY = 90

MAX_MESSAGE_PIXELS = 32 * 2**20
"""Pixels one message may carry in all its images together (32 Mpx, about 100 MB as RGB),
checked from the image headers before anything is decoded: a small compressed body must not
expand into gigabytes."""


class BlobInfo(BaseModel):
    """How to read one image blob that follows the JSON line."""

    nbytes: int = Field(ge=0)
    encoding: ImageEncoding
    shape: list[int] | None = None
    """``[height, width, 3]`` for raw pixels."""


class ServerInfo(BaseModel):
    """What ``GET /v1/info`` answers."""

    protocol: int
    env_id: str
    sessions: int
    max_sessions: int
    max_request_bytes: int
    call_timeout_s: float
    eviseek_version: str
    image_encodings: list[str] = Field(default_factory=lambda: ["png", "raw"])
    """The image encodings the server sends (absent from servers older than ``jpeg``)."""
    request_timeout_s: float | None = None
    """Seconds one request may take to arrive, headers and body (``None``: an older server)."""
    max_pixels: int | None = None
    """Pixels one request's images may hold together, checked before decoding."""
    max_unauthenticated: int | None = None
    """Connections at once that have not yet sent an authorized request."""
    max_client_connections: int | None = None
    """Connections at once from one client address."""
    auth_timeout_s: float | None = None
    """Seconds a new connection may take to send its first request's headers."""
    max_unauthenticated_per_client: int | None = None
    """Connections at once from one address that have not yet sent an authorized request."""
    asset_root: bool | None = None
    """Whether a reset may name images by path, read from the server's ``--asset-root``
    (``False``: images travel only as bytes; ``None``: a server older than the option)."""


class OpenedSession(BaseModel):
    """What ``POST /v1/envs`` answers: the new session and what its environment can do."""

    session: str
    env_id: str
    visual_support: bool


class ErrorReply(BaseModel):
    """The JSON body of every non-200 answer."""

    error: str
    type: str = "EnvError"


class _Blobs:
    """Collects image blobs while a payload is turned into JSON."""

    def __init__(self, encoding: ImageEncoding) -> None:
        self.encoding = encoding
        self.infos: list[BlobInfo] = []
        self.parts: list[bytes] = []

    def add(self, image: Image | None) -> dict[str, Any] | None:
        """The JSON form of ``image``: its record plus ``"blob": index`` when it has pixels."""
        if image is None:
            return None
        # Only the size and the hash travel with the pixels: a path is this side's business (the
        # other side never opens a path it reads from the wire), so none is sent.
        record = image.model_dump(mode="json", exclude={"path"})
        arr = image.array()  # an image known only by its path is read here, by its owner
        if self.encoding == "raw":
            data = np.ascontiguousarray(arr).tobytes()
            self.infos.append(BlobInfo(nbytes=len(data), encoding="raw", shape=list(arr.shape)))
        elif self.encoding == "jpeg":
            data = image.encoded("jpeg", quality=JPEG_QUALITY)
            self.infos.append(BlobInfo(nbytes=len(data), encoding="jpeg"))
        else:
            data = image.encoded("png")  # the fast zlib level; shared with any other use of the frame
            self.infos.append(BlobInfo(nbytes=len(data), encoding="png"))
        self.parts.append(data)
        record["blob"] = len(self.infos) - 1
        return record


def decode_image_bytes(data: bytes, budget: int) -> np.ndarray:
    """The pixels of a PNG or JPEG file's bytes, refused (:class:`EnvError`) when the size its
    header states is over ``budget`` pixels, before anything is decoded; any other format is
    refused too."""
    if data[:3] == b"\xff\xd8\xff":
        return _decode_jpeg(data, budget)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise EnvError("an image must be a PNG or a JPEG file")
    return _decode_blob(BlobInfo(nbytes=len(data), encoding="png"), data, budget)


def _decode_blob(info: BlobInfo, data: bytes, budget: int) -> np.ndarray:
    """One blob's pixels; ``budget`` is how many pixels the message may still decode."""
    if info.encoding == "jpeg":
        return _decode_jpeg(data, budget)
    if info.encoding == "raw":
        if not info.shape or len(info.shape) != 3 or info.shape[2] != 3 or min(info.shape) < 1:
            raise EnvError(f"a raw image blob needs a [height, width, 3] shape, got {info.shape}")
        _check_pixels(info.shape[0], info.shape[1], budget)
        expected = info.shape[0] * info.shape[1] * 3
        if len(data) != expected:
            raise EnvError(f"a raw image blob of shape {info.shape} has {len(data)} bytes, not {expected}")
        return np.frombuffer(data, dtype=np.uint8).reshape(info.shape).copy()
    from PIL import Image as PILImage

    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        # The size from the PNG header itself, before any decoder sees the file.
        _check_pixels(int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big"), budget)
    try:
        with PILImage.open(io.BytesIO(data), formats=["PNG"]) as pil:
            # Opening reads only the header: the size is known before any pixel is decoded.
            _check_pixels(pil.height, pil.width, budget)
            return np.asarray(pil.convert("RGB"))
    except EnvError:
        raise
    except Exception as exc:  # truncated, not a PNG, a decompression bomb, a bad chunk ...
        raise EnvError(f"a png image blob cannot be decoded ({_one_line(exc)})") from None


def _check_pixels(height: int, width: int, budget: int) -> None:
    if height * width > budget:
        raise EnvError(
            f"an image of {width}x{height} pixels is over the {budget:,} pixels left of this message's "
            "limit (set on the server with --max-image-mpx)"
        )


def _one_line(exc: BaseException) -> str:
    """An exception as one short line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _decode_jpeg(data: bytes, budget: int) -> np.ndarray:
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data), formats=["JPEG"]) as pil:
            _check_pixels(pil.height, pil.width, budget)  # from the header, before decoding
            return np.asarray(pil.convert("RGB"))
    except EnvError:
        raise
    except Exception as exc:  # truncated, not a JPEG ...
        raise EnvError(f"a jpeg image blob cannot be decoded ({_one_line(exc)})") from None


PathOpener = Callable[[Any], Image]
"""Reads an image that a message names by path instead of carrying (the server's
``--asset-root``); raises :class:`EnvError` when it may not."""


def _image_from(record: Any, blobs: list[np.ndarray], open_path: PathOpener | None = None) -> Image | None:
    """The image a record describes, from its blob.

    A record without a blob names a file by its ``path``. Opening it would let whoever wrote
    the message read any image file on this machine (and learn from the error text which other
    files exist), so it is refused unless ``open_path`` is given, and then only ``open_path``
    reads it. A path that travels with a blob is dropped: this side never dereferences it.
    """
    if record is None:
        return None
    if not isinstance(record, dict):
        raise EnvError(f"an image must be a JSON object, got {type(record).__name__}")
    index = record.get("blob")
    if index is None:
        if open_path is None:
            raise EnvError(
                "an image came as a path instead of its bytes; images travel as bytes (a server "
                "reads named images only from its --asset-root)"
            )
        return open_path(record.get("path"))
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(blobs):
        raise EnvError(f"image refers to blob {index!r}, but the message has {len(blobs)} blob(s)")
    # The sender's ``sha256`` is not taken either: it names the file the image is saved as, so a
    # server's "../../x" would have written outside the run folder. It is computed here when needed.
    return Image.from_array(blobs[index])


def encode(payload: dict[str, Any], blobs: _Blobs | None = None) -> bytes:
    """A message body: ``payload`` as one JSON line, then the blobs it refers to."""
    body: dict[str, Any] = dict(payload)
    if blobs is not None and blobs.infos:
        body["blobs"] = [b.model_dump() for b in blobs.infos]
    head = json.dumps(to_jsonable_python(body, fallback=repr), separators=(",", ":")).encode()
    return b"".join([head, b"\n", *(blobs.parts if blobs is not None else [])])


def decode(body: bytes, *, max_pixels: int = MAX_MESSAGE_PIXELS) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The payload and the decoded image arrays of a message body.

    Every way a body can be malformed raises :class:`EnvError` with a one-line reason; images
    over ``max_pixels`` (all of the message's images together) are refused before decoding.
    """
    head, _, rest = body.partition(b"\n")
    try:
        payload = json.loads(head)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EnvError(f"not an eviseek env message (its first line is not JSON: {exc})") from None
    except RecursionError:
        raise EnvError("not an eviseek env message (its first line nests too deeply)") from None
    if not isinstance(payload, dict):
        raise EnvError("not an eviseek env message (its first line is not a JSON object)")
    raw_infos = payload.pop("blobs", [])
    if not isinstance(raw_infos, list):
        raise EnvError("not an eviseek env message ('blobs' is not a list)")
    try:
        infos = [BlobInfo.model_validate(b) for b in raw_infos]
    except ValueError as exc:
        raise EnvError(f"a blob description is invalid ({first_error(exc)})") from None
    if sum(i.nbytes for i in infos) != len(rest):
        raise EnvError(
            f"the message announces {sum(i.nbytes for i in infos)} bytes of images but carries {len(rest)}"
        )
    arrays: list[np.ndarray] = []
    offset, budget = 0, max_pixels
    for info in infos:
        array = _decode_blob(info, rest[offset : offset + info.nbytes], budget)
        budget -= array.shape[0] * array.shape[1]
        arrays.append(array)
        offset += info.nbytes
    return payload, arrays


def first_error(exc: BaseException) -> str:
    """One line for a validation error: pydantic's first problem with where it is, else the message."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "value"
            return f"{where}: {first.get('msg', '')}"[:300]
        except Exception:  # not pydantic's kind of errors()
            pass
    return _one_line(exc)


# -- payload pieces ----------------------------------------------------------------------------


def dump_question(question: Question, blobs: _Blobs) -> dict[str, Any]:
    """A question with its in-memory images (initial view, reference images) as blobs."""
    record = question.model_dump(mode="json", exclude={"initial_image", "reference_images"})
    record["initial_image"] = blobs.add(question.initial_image)
    record["reference_images"] = [blobs.add(img) for img in question.reference_images]
    return record


def load_question(
    record: dict[str, Any], arrays: list[np.ndarray], open_path: PathOpener | None = None
) -> Question:
    """Inverse of :func:`dump_question`; an image named by path is refused unless ``open_path``
    reads it (see :func:`_image_from`)."""
    record = dict(record)
    initial = _image_from(record.pop("initial_image", None), arrays, open_path)
    raw_refs = record.pop("reference_images", None) or []
    if not isinstance(raw_refs, list):
        raise EnvError("reference_images must be a list")
    refs = [_image_from(r, arrays, open_path) for r in raw_refs]
    question = Question.model_validate(record)
    question.initial_image = initial
    question.reference_images = [r for r in refs if r is not None]
    return question


def dump_observation(obs: Observation, blobs: _Blobs) -> dict[str, Any]:
    """An observation without its privileged arrays; the image (and those of any frames the
    action rendered on the way, ``action_frames``) go as blobs."""
    record = obs.model_dump(mode="json", exclude={"image", "action_frames"})
    record["image"] = blobs.add(obs.image)
    if obs.action_frames:
        record["action_frames"] = [dump_observation(f, blobs) for f in obs.action_frames]
    return record


def load_observation(record: dict[str, Any], arrays: list[np.ndarray]) -> Observation:
    """Inverse of :func:`dump_observation`."""
    record = dict(record)
    image = _image_from(record.pop("image", None), arrays)
    if image is None:
        raise EnvError("an observation came without an image")
    frames = [load_observation(f, arrays) for f in record.pop("action_frames", None) or []]
    return Observation.model_validate({**record, "image": image, "action_frames": frames})


def dump_step(result: StepResult, blobs: _Blobs) -> dict[str, Any]:
    """A step result, its observation's image as a blob."""
    record = result.model_dump(mode="json", exclude={"observation"})
    record["observation"] = dump_observation(result.observation, blobs)
    return record


def load_step(record: dict[str, Any], arrays: list[np.ndarray]) -> StepResult:
    """Inverse of :func:`dump_step`."""
    record = dict(record)
    obs = load_observation(record.pop("observation"), arrays)
    return StepResult.model_validate({**record, "observation": obs})


def load_specs(records: Any) -> list[ActionSpec]:
    """Action specs from their JSON list."""
    if not isinstance(records, list):
        raise EnvError("legal_actions must answer a list of action specs")
    return [ActionSpec.model_validate(r) for r in records]


def new_blobs(encoding: str) -> _Blobs:
    """An empty blob collector for ``encoding`` (one of :data:`ENCODINGS`)."""
    if encoding not in ENCODINGS:
        raise EnvError(f"unknown image encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
    return _Blobs(encoding)  # type: ignore[arg-type]
