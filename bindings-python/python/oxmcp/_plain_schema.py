"""JSON Schemas for plain annotations (``str``, ``int | None``, ``list[str]``, ``Literal``...)
built without pydantic, so a server whose tools take and return JSON values never imports it.

Importing pydantic costs a server about a hundred milliseconds of startup and ten MiB of
memory, more than the rest of the package together, and most tools need none of it: their
arguments already are the Python values. The schemas here are exactly what pydantic's
``model_json_schema`` emits for the same annotations (keys in its sorted order, titles left
out as ``_signature`` strips them); ``tests/python/test_plain_schema.py`` holds them equal
over a matrix of signatures. Anything not handled here returns ``None`` and goes to pydantic.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_UNION_ORIGINS = (typing.Union, types.UnionType)


def annotation_schema(annotation: Any) -> dict[str, Any] | None:
    """The schema of one annotation, or ``None`` when pydantic must derive it."""
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    scalar = _SCALARS.get(annotation)
    if scalar is not None:
        return {"type": scalar}
    if annotation is dict:
        return {"additionalProperties": True, "type": "object"}
    if annotation is list:
        return {"items": {}, "type": "array"}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list and len(args) == 1:
        items = annotation_schema(args[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = annotation_schema(args[1])
        if values is None:
            return None
        return {"additionalProperties": values or True, "type": "object"}
    if origin in _UNION_ORIGINS:
        # Only unions of concrete types: pydantic folds `Any` and literals in ways of its own.
        members = []
        for arg in args:
            if arg is Any or typing.get_origin(arg) is typing.Literal:
                return None
            member = annotation_schema(arg)
            if member is None:
                return None
            members.append(member)
        return {"anyOf": members}
    if origin is typing.Literal:
        return _literal(args)
    return None


def _literal(values: tuple[Any, ...]) -> dict[str, Any] | None:
    if not values:
        return None
    if all(type(v) is str for v in values):
        kind = "string"
    elif all(type(v) is int for v in values):
        kind = "integer"
    else:
        return None  # bools, mixed kinds, enums: pydantic's rules
    if len(values) == 1:
        return {"const": values[0], "type": kind}
    return {"enum": list(dict.fromkeys(values)), "type": kind}


def _plain_default(value: Any) -> bool:
    """A default that is JSON as it is (pydantic would emit it unchanged)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list:
        return all(_plain_default(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain_default(v) for k, v in value.items())
    return False


def property_schema(
    annotation: Any, default: Any, description: str | None
) -> dict[str, Any] | None:
    """One parameter's property: the annotation's schema with its default and description
    (``default`` is ``inspect.Parameter.empty`` for a required parameter)."""
    schema = annotation_schema(annotation)
    if schema is None:
        return None
    extra: dict[str, Any] = {}
    if default is not inspect.Parameter.empty:
        if not _plain_default(default):
            return None
        extra["default"] = default
    if description is not None:
        extra["description"] = description
    if not extra:
        return schema
    return dict(sorted({**schema, **extra}.items()))
