"""The request bodies of ``neardup serve``: parsing and checking them, with errors that say what
to fix (the service answers them as JSON 4xx; :mod:`neardup.serve.openapi` has the schemas)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Literal

from neardup.errors import InputError
from neardup.io import Document
from neardup.serve.config import Limits

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "Batch",
    "ImageDocument",
    "Policy",
    "RequestError",
    "document_id",
    "parse_documents",
]

Policy = Literal["add", "skip-if-duplicate", "query-only"]
POLICIES: tuple[Policy, ...] = ("add", "skip-if-duplicate", "query-only")
DEFAULT_POLICY: Policy = "add"

_MAX_ID = 2**63  # numeric ids are accepted in the signed 64-bit range


class RequestError(InputError):
    """A request the service refuses: its HTTP ``status``, a short ``code`` and a message that
    says what to fix."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass(frozen=True, slots=True)
class ImageDocument(Document):
    """A document whose content is an image's encoded bytes (sent base64 in ``image``)."""

    data: bytes = b""

    def read_bytes(self, *, max_bytes: int = 0) -> bytes:
        """The image's bytes (the size limit was applied when the request was read)."""
        return self.data


@dataclass(frozen=True, slots=True)
class Batch:
    """The documents of one request and what to do with them."""

    docs: list[Document]
    policy: Policy


def _bad(code: str, message: str) -> RequestError:
    return RequestError(400, code, message)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_json(body: bytes) -> Any:
    """Parse a JSON body (UTF-8; no NaN or Infinity).

    Raises:
        RequestError: 400 when it is not UTF-8 JSON.
    """
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_no_constants)
    except UnicodeDecodeError:
        raise _bad("invalid_json", "the body is not UTF-8; send UTF-8 JSON") from None
    except RecursionError:
        raise _bad(
            "invalid_json", "the body nests JSON too deeply; send the documented shape"
        ) from None
    except ValueError as exc:
        raise _bad(
            "invalid_json", f"the body is not valid JSON ({exc}); send a JSON object"
        ) from None


def document_id(raw: object, where: str, limits: Limits) -> str:
    """A document id: a non-empty string of at most ``max_id_chars`` characters, or a number
    in the signed 64-bit range, kept as ``str()`` of it, as ``neardup dedup`` reads the ids
    of JSONL records (``7`` is ``"7"``, ``1.5`` is ``"1.5"``).

    Raises:
        RequestError: 400 for anything else.

    Examples:
        >>> document_id(7, "document 0", Limits()), document_id("a/b", "document 0", Limits())
        ('7', 'a/b')
    """
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        if not -_MAX_ID <= raw <= _MAX_ID - 1:
            raise _bad(
                "invalid_id",
                f"{where}: a numeric id must be in the signed 64-bit range; send a string",
            )
        return str(raw)
    if not isinstance(raw, str):
        raise _bad(
            "invalid_id",
            f"{where}: 'id' must be a string or a number, got {_type(raw)}; give every "
            "document an id",
        )
    if not raw:
        raise _bad("invalid_id", f"{where}: 'id' is empty; give every document a non-empty id")
    if len(raw) > limits.max_id_chars:
        raise _bad(
            "invalid_id",
            f"{where}: 'id' has {len(raw)} characters, over the {limits.max_id_chars} allowed; "
            "use a shorter id (e.g. a hash of the long one)",
        )
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad(
            "invalid_id",
            f"{where}: 'id' holds a lone surrogate (an unpaired \\ud800-\\udfff escape); "
            "send ids that are valid Unicode",
        ) from None
    return raw


def _type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _too_large(where: str, size: int, limits: Limits, what: str) -> RequestError:
    return RequestError(
        413,
        "document_too_large",
        f"{where} is {size} bytes of {what}, over the {limits.max_document_bytes}-byte limit "
        "(--max-document-bytes); split it, or raise the limit on the server",
    )


def _text(raw: object, where: str, limits: Limits) -> str:
    if not isinstance(raw, str):
        raise _bad("invalid_document", f"{where}: 'text' must be a string, got {_type(raw)}")
    cap = limits.max_document_bytes
    if len(raw) > cap:
        raise _too_large(where, len(raw.encode("utf-8", "surrogatepass")), limits, "text")
    if 4 * len(raw) > cap:  # only then can the UTF-8 be over the cap
        size = len(raw.encode("utf-8", "surrogatepass"))
        if size > cap:
            raise _too_large(where, size, limits, "text")
    return raw


def _image(raw: object, where: str, limits: Limits) -> bytes:
    if not isinstance(raw, str):
        raise _bad(
            "invalid_document", f"{where}: 'image' must be a base64 string, got {_type(raw)}"
        )
    if len(raw) // 4 * 3 > limits.max_document_bytes + 2:
        raise _too_large(where, len(raw) // 4 * 3, limits, "image")
    try:
        data = base64.b64decode(raw.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise _bad(
            "invalid_image",
            f"{where}: 'image' is not base64 (standard alphabet, with padding); encode the "
            "image file's bytes with base64",
        ) from None
    if len(data) > limits.max_document_bytes:
        raise _too_large(where, len(data), limits, "image")
    if not data:
        raise _bad("invalid_image", f"{where}: 'image' is empty; send the image file's bytes")
    return data


def _document(raw: object, i: int, limits: Limits, images: bool) -> Document:
    where = f"document {i}"
    if not isinstance(raw, dict):
        raise _bad(
            "invalid_document",
            f'{where} must be an object like {{"id": "a", "text": "..."}}, got {_type(raw)}',
        )
    unknown = sorted(set(raw) - {"id", "text", "image"})
    if unknown:
        raise _bad(
            "invalid_document",
            f"{where} has unknown field(s) {', '.join(map(repr, unknown))}; a document has "
            "'id' and 'text' (or 'image', base64, for image methods)",
        )
    if "id" not in raw:
        raise _bad("invalid_id", f"{where} has no 'id'; give every document an id")
    doc_id = document_id(raw["id"], where, limits)
    where = f"document {i} (id {doc_id[:80]!r})"
    has_text, has_image = "text" in raw, "image" in raw
    if images:
        if has_text or not has_image:
            raise _bad(
                "invalid_document",
                f"{where}: this index holds image hashes; send the image file's bytes, "
                "base64-encoded, in 'image' (and no 'text')",
            )
        return ImageDocument(doc_id, data=_image(raw["image"], where, limits))
    if has_image or not has_text:
        raise _bad(
            "invalid_document",
            f"{where}: this index holds text sketches; send the text in 'text' (and no 'image')",
        )
    return Document(doc_id, _text(raw["text"], where, limits))


def parse_documents(body: bytes, limits: Limits, *, images: bool, policy_allowed: bool) -> Batch:
    """Parse a ``/v1/check`` (``policy_allowed``) or ``/v1/query`` body.

    Args:
        body: The request body.
        limits: The service's limits.
        images: The index holds image hashes: documents carry ``image``, not ``text``.
        policy_allowed: ``policy`` may be given (``/v1/check``).

    Raises:
        RequestError: 400 for a malformed body, 413 for too many or too large documents.

    Examples:
        >>> b = parse_documents(b'{"documents": [{"id": 1, "text": "hi"}]}', Limits(),
        ...                     images=False, policy_allowed=True)
        >>> b.policy, b.docs[0].id, b.docs[0].text
        ('add', '1', 'hi')
    """
    data = load_json(body)
    if not isinstance(data, dict):
        raise _bad(
            "invalid_body",
            f'the body must be a JSON object like {{"documents": [...]}}, got {_type(data)}',
        )
    allowed = {"documents", "policy"} if policy_allowed else {"documents"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        hint = (
            "; /v1/query adds nothing: drop 'policy', or use /v1/check"
            if "policy" in unknown
            else ""
        )
        raise _bad(
            "invalid_body",
            f"unknown field(s) {', '.join(map(repr, unknown))}; the body has "
            f"{' and '.join(map(repr, sorted(allowed)))}{hint}",
        )
    policy: Policy = DEFAULT_POLICY
    if "policy" in data:
        given = data["policy"]
        if given not in POLICIES:
            raise _bad(
                "invalid_policy",
                f"policy must be one of {', '.join(POLICIES)}; got "
                f"{given if isinstance(given, str) else _type(given)!r}",
            )
        policy = given
    if "documents" not in data:
        raise _bad("invalid_body", "the body has no 'documents' array; send {\"documents\": [...]}")
    raw = data["documents"]
    if not isinstance(raw, list):
        raise _bad("invalid_body", f"'documents' must be an array, got {_type(raw)}")
    if len(raw) > limits.max_documents:
        raise RequestError(
            413,
            "too_many_documents",
            f"the request has {len(raw)} documents, over the {limits.max_documents} allowed "
            "(--max-documents); send them in several requests",
        )
    return Batch([_document(d, i, limits, images) for i, d in enumerate(raw)], policy)
