"""The OpenAPI 3.1 document of ``neardup serve`` (``GET /openapi.json``), written out by hand so
that it says exactly what :mod:`neardup.serve.requests` accepts and the endpoints answer."""

from __future__ import annotations

from typing import Any

from neardup.serve.config import Limits
from neardup.serve.requests import POLICIES

__all__ = ["openapi"]

_JSON = "application/json"


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _ok(schema: str, description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {_JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


_RETRY = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "string"},
    }
}


def _busy() -> dict[str, Any]:
    out = _error("Overloaded or shutting down (the bounded queue is full); retry later.")
    out["headers"] = _RETRY
    return out


def _auth(secured: bool) -> dict[str, Any]:
    if not secured:
        return {"403": _error("The Host header is not a loopback name (a service without keys).")}
    return {
        "401": _error("No valid API key (Authorization: Bearer KEY)."),
        "403": _error("The key's scope does not allow this (a read key that tries to write)."),
    }


def openapi(
    *, method: str, images: bool, limits: Limits, secured: bool, version: str
) -> dict[str, Any]:
    """The OpenAPI document for a service over a ``method`` store.

    Args:
        method: The store's method (named in the description).
        images: Documents are base64 images (``image``) instead of ``text``.
        limits: The service's limits (document count, id length).
        secured: API keys are required (401/403 answers, the bearer scheme).
        version: The neardup version.

    Examples:
        >>> doc = openapi(method="minhash", images=False, limits=Limits(), secured=False,
        ...               version="0")
        >>> sorted(doc["paths"])[:3]
        ['/healthz', '/metrics', '/openapi.json']
    """
    content_key = "image" if images else "text"
    content_schema: dict[str, Any] = (
        {
            "type": "string",
            "contentEncoding": "base64",
            "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
            "minLength": 4,
            "description": "The image file's bytes, base64 (standard alphabet, padded).",
        }
        if images
        else {"type": "string", "description": "The document's text."}
    )
    document = {
        "type": "object",
        "required": ["id", content_key],
        "additionalProperties": False,
        "properties": {
            "id": {
                "oneOf": [
                    {"type": "string", "minLength": 1, "maxLength": limits.max_id_chars},
                    {"type": "number", "minimum": -(2**63), "maximum": 2**63 - 1},
                ],
                "description": "The document's id; a number becomes its string, as neardup "
                "dedup reads JSONL ids (7 is '7', 1.5 is '1.5').",
            },
            content_key: content_schema,
        },
    }
    documents = {
        "type": "array",
        "maxItems": limits.max_documents,
        "items": {"$ref": "#/components/schemas/Document"},
    }
    error = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string", "description": "What was wrong, what to do."},
                },
            }
        },
    }
    duplicate = {
        "type": "object",
        "required": ["id", "similarity"],
        "properties": {
            "id": {"type": "string"},
            "similarity": {"type": "number", "minimum": 0, "maximum": 1},
        },
    }
    result = {
        "type": "object",
        "required": ["id", "added", "duplicates"],
        "properties": {
            "id": {"type": "string"},
            "added": {"type": "boolean"},
            "duplicates": {
                "type": "array",
                "maxItems": limits.max_duplicates,
                "items": {"$ref": "#/components/schemas/Duplicate"},
            },
        },
    }
    results = {
        "type": "object",
        "required": ["results"],
        "properties": {
            "results": {"type": "array", "items": {"$ref": "#/components/schemas/Result"}}
        },
    }
    stats = {
        "type": "object",
        "required": ["documents", "method", "threshold", "parameters", "store", "service"],
        "properties": {
            "documents": {"type": "integer", "minimum": 0},
            "method": {"type": "string"},
            "threshold": {"type": "number"},
            "parameters": {"type": "object"},
            "fingerprint": {"type": "string"},
            "store": {"type": "object"},
            "service": {"type": "object"},
        },
    }
    stored = {
        "type": "object",
        "required": ["id", "sketch"],
        "properties": {
            "id": {"type": "string"},
            "sketch": {"type": "string", "contentEncoding": "base64"},
        },
    }
    deleted = {
        "type": "object",
        "required": ["id", "deleted"],
        "properties": {"id": {"type": "string"}, "deleted": {"type": "boolean"}},
    }
    health = {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string", "enum": ["ok", "unavailable"]}},
    }
    bad = {
        "400": _error("A malformed body, document or id; the message says what to fix."),
        "413": _error("The body, a document or the number of documents is over its limit."),
        "415": _error("The body is not sent as application/json."),
    }
    busy = {"503": _busy()}
    doc_id = {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "minLength": 1, "maxLength": limits.max_id_chars},
        "description": "The document id, percent-encoded.",
    }

    def body(schema: str) -> dict[str, Any]:
        return {
            "required": True,
            "content": {_JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
        }

    check_body = {
        "type": "object",
        "required": ["documents"],
        "additionalProperties": False,
        "properties": {
            "documents": documents,
            "policy": {"type": "string", "enum": list(POLICIES), "default": "add"},
        },
    }
    query_body = {
        "type": "object",
        "required": ["documents"],
        "additionalProperties": False,
        "properties": {"documents": documents},
    }
    security: list[dict[str, list[str]]] = [{"bearer": []}] if secured else []
    paths: dict[str, Any] = {
        "/v1/check": {
            "post": {
                "operationId": "check",
                "summary": "Check documents for near-duplicates, and add them (policy).",
                "description": "Each document is checked against the store, in request "
                "order, and added as the policy says: add (always; a stored id is "
                "replaced), skip-if-duplicate (only when it has no duplicate) or query-only "
                "(never). A stored document with the same id is not its own duplicate. The "
                "answer comes once the added documents are committed.",
                "requestBody": body("CheckRequest"),
                "responses": {
                    "200": _ok("Results", "One result per document, in request order."),
                    **bad,
                    **_auth(secured),
                    **busy,
                },
                "security": security,
            }
        },
        "/v1/query": {
            "post": {
                "operationId": "query",
                "summary": "Find the stored near-duplicates of documents; nothing is added.",
                "requestBody": body("QueryRequest"),
                "responses": {
                    "200": _ok("Results", "One result per document (added is false)."),
                    **bad,
                    **_auth(secured),
                    **busy,
                },
                "security": security,
            }
        },
        "/v1/documents/{id}": {
            "get": {
                "operationId": "getDocument",
                "summary": "A stored document's sketch.",
                "parameters": [doc_id],
                "responses": {
                    "200": _ok("StoredDocument", "The document is stored."),
                    "400": _error("A malformed id."),
                    "404": _error("No document with this id."),
                    **_auth(secured),
                    **busy,
                },
                "security": security,
            },
            "delete": {
                "operationId": "deleteDocument",
                "summary": "Remove a stored document.",
                "parameters": [doc_id],
                "responses": {
                    "200": _ok("Deleted", "The document was removed (committed)."),
                    "400": _error("A malformed id."),
                    "404": _error("No document with this id."),
                    **_auth(secured),
                    **busy,
                },
                "security": security,
            },
        },
        "/v1/stats": {
            "get": {
                "operationId": "stats",
                "summary": "Counts, method, parameters and store size.",
                "responses": {
                    "200": _ok("Stats", "The statistics."),
                    **_auth(secured),
                    **busy,
                },
                "security": security,
            }
        },
        "/healthz": {
            "get": {
                "operationId": "health",
                "summary": "Liveness: 200 while the service takes requests.",
                "responses": {
                    "200": _ok("Health", "Serving."),
                    "503": {
                        "description": "Not serving (shutting down, or the writer stopped).",
                        "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Health"}}},
                    },
                },
                "security": [],
            }
        },
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "summary": "Prometheus text: requests, latencies, documents, commits.",
                "responses": {
                    "200": {
                        "description": "The metrics.",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    **_auth(secured),
                },
                "security": security,
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "openapi",
                "summary": "This document.",
                "responses": {
                    "200": {"description": "OpenAPI 3.1.", "content": {_JSON: {"schema": {}}}}
                },
                "security": [],
            }
        },
    }
    components: dict[str, Any] = {
        "schemas": {
            "CheckRequest": check_body,
            "QueryRequest": query_body,
            "Document": document,
            "Duplicate": duplicate,
            "Result": result,
            "Results": results,
            "Stats": stats,
            "StoredDocument": stored,
            "Deleted": deleted,
            "Health": health,
            "Error": error,
        }
    }
    if secured:
        components["securitySchemes"] = {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "A key of the --api-key-file: read scope, or write scope "
                "(needed by check with policy add or skip-if-duplicate, and by delete).",
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "neardup serve",
            "version": version,
            "description": f"Near-duplicate detection as a service, over a {method} store: "
            "check documents at ingest time and remember them. See docs/serve.md.",
        },
        "paths": paths,
        "components": components,
    }
