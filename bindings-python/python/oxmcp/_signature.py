"""From a Python function to an MCP definition: the input schema from the signature and the
docstring, the output schema from the return annotation, and the small adapters that turn the
wire's arguments into a call and the return value into JSON.

Plain annotations (JSON values: ``str``, ``list[int]``, ``dict``, ``Literal``...) get their
schemas from ``_plain_schema``; anything else (models, dataclasses, enums, ``Field``) from
pydantic, which is imported only then. Imported only when a server registers something, so
``import oxmcp`` stays light.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import sys
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import _plain_schema
from .content import _HELPERS

if TYPE_CHECKING:
    from pydantic import BaseModel

# Annotations whose JSON value is already the Python value: no validation step at call time.
_PLAIN = {str, int, float, bool, dict, list, Any, type(None)}


@dataclasses.dataclass
class Derived:
    """What a decorated function becomes."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wrapped: bool
    context_param: str | None
    model: type[BaseModel] | None  # set when arguments need pydantic to become Python values
    description: str | None


def _is_context(annotation: Any) -> bool:
    from .context import Context

    if isinstance(annotation, str):
        return annotation.rsplit(".", 1)[-1] == "Context"
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context(typing.get_args(annotation)[0])
    return inspect.isclass(annotation) and issubclass(annotation, Context)


def _plain(annotation: Any) -> bool:
    if annotation in _PLAIN or annotation is inspect.Parameter.empty:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _plain(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return True
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return all(_plain(a) for a in typing.get_args(annotation))
    if origin in (list, dict):
        return all(_plain(a) for a in typing.get_args(annotation))
    return False


_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\(.*?\))?\s*:\s*(.+)$")


def _docstring(fn: Callable[..., Any]) -> tuple[str | None, dict[str, str]]:
    """The summary (everything before an ``Args:`` section) and per-parameter descriptions
    (Google style ``name: text`` lines under ``Args:``/``Parameters:``)."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None, {}
    lines = doc.splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and lines[i].strip().rstrip(":").lower() not in (
        "args",
        "arguments",
        "parameters",
        "params",
    ):
        summary.append(lines[i])
        i += 1
    current: str | None = None
    for line in lines[i + 1 :]:
        if line.strip() and not line.startswith((" ", "\t")):
            break  # the next section (Returns:, Raises:, ...)
        m = _ARG_LINE.match(line)
        if m and (len(line) - len(line.lstrip())) <= 4:
            current = m.group(1).lstrip("*")
            params[current] = m.group(2).strip()
        elif current and line.strip():
            params[current] += " " + line.strip()
    text = "\n".join(summary).strip()
    return (text or None), params


def _strip_titles(schema: Any) -> Any:
    """pydantic adds a ``title`` to every property; MCP schemas read better without."""
    if isinstance(schema, dict):
        out = {}
        for k, v in schema.items():
            if k == "title" and isinstance(v, str):
                continue
            if k == "properties" and isinstance(v, dict):
                out[k] = {name: _strip_titles(p) for name, p in v.items()}
            else:
                out[k] = _strip_titles(v)
        return out
    if isinstance(schema, list):
        return [_strip_titles(s) for s in schema]
    return schema


def _is_content_annotation(annotation: Any) -> bool:
    if inspect.isclass(annotation) and issubclass(annotation, _HELPERS):
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_is_content_annotation(a) for a in args)
    return False


def output_schema(annotation: Any) -> tuple[dict[str, Any] | None, bool]:
    """The output schema for a return annotation and whether it wraps the value as
    ``{"result": ...}`` (anything whose schema is not an object, as the official SDK does)."""
    if annotation in (inspect.Signature.empty, None, type(None), Any) or _is_content_annotation(
        annotation
    ):
        return None, False
    schema = _plain_schema.annotation_schema(annotation)
    if schema is None:
        import pydantic

        try:
            adapter = pydantic.TypeAdapter(annotation)
            schema = _strip_titles(adapter.json_schema(mode="serialization"))
        except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError):
            return None, False
    if schema.get("type") == "object" and "$ref" not in schema:
        return schema, False
    if "$ref" in schema and schema.get("$defs"):
        # A model: inline the top-level definition so the schema is an object at the top.
        name = schema["$ref"].rsplit("/", 1)[-1]
        defs = dict(schema["$defs"])
        top = defs.pop(name, None)
        if isinstance(top, dict) and top.get("type") == "object":
            if defs:
                top = {**top, "$defs": defs}
            return top, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def derive(fn: Callable[..., Any], structured_output: bool | None = None) -> Derived:
    """Schemas and call adapters for a tool function."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    summary, param_docs = _docstring(fn)
    params: list[tuple[str, Any, Any]] = []  # name, annotation, default (or empty)
    context_param = None
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = hints.get(name, p.annotation)
        if _is_context(annotation):
            context_param = name
            continue
        if annotation is inspect.Parameter.empty:
            annotation = Any
        params.append((name, annotation, p.default))
    schema = _plain_input_schema(params, param_docs)
    model = None
    if schema is None:
        schema, model = _pydantic_input_schema(fn.__name__, params, param_docs)
    ret = hints.get("return", sig.return_annotation)
    out_schema, wrapped = (None, False) if structured_output is False else output_schema(ret)
    return Derived(
        input_schema=schema,
        output_schema=out_schema,
        wrapped=wrapped,
        context_param=context_param,
        model=model,
        description=summary,
    )


def _plain_input_schema(
    params: list[tuple[str, Any, Any]], docs: dict[str, str]
) -> dict[str, Any] | None:
    """The input schema when every parameter is plain (the same as pydantic's), else None."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, annotation, default in params:
        prop = _plain_schema.property_schema(annotation, default, docs.get(name))
        if prop is None:
            return None
        properties[name] = prop
        if default is inspect.Parameter.empty:
            required.append(name)
    schema: dict[str, Any] = {"properties": properties}
    if required:
        schema["required"] = required
    schema["type"] = "object"
    return schema


def _pydantic_input_schema(
    fn_name: str, params: list[tuple[str, Any, Any]], docs: dict[str, str]
) -> tuple[dict[str, Any], type[BaseModel] | None]:
    """The input schema derived by pydantic, and the model that turns the wire's arguments
    into the annotated types when some of them are not plain JSON values."""
    import pydantic
    from pydantic.fields import FieldInfo
    from pydantic_core import PydanticUndefined

    fields: dict[str, Any] = {}
    plain = True
    for name, annotation, default in params:
        plain = plain and _plain(annotation)
        if default is inspect.Parameter.empty:
            default = PydanticUndefined
        doc = docs.get(name)
        if isinstance(default, FieldInfo):
            fields[name] = (annotation, default)
        elif doc is not None:
            fields[name] = (annotation, pydantic.Field(default=default, description=doc))
        else:
            fields[name] = (annotation, default)
    model = pydantic.create_model(f"{fn_name}Arguments", **fields)  # type: ignore[call-overload]
    schema = _strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema, None if plain else model


def arguments(derived: Derived, args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments for the call: the wire's values, or pydantic's instances of the
    annotated types (models, dataclasses, enums) when the signature asks for them."""
    if derived.model is None:
        return args
    validated = derived.model.model_validate(args)
    return {name: getattr(validated, name) for name in type(validated).model_fields}


def _is_model(value: Any) -> bool:
    # A pydantic model exists only if pydantic was imported (by the user or by a schema).
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def _convertible(value: Any) -> bool:
    return (
        isinstance(value, (*_HELPERS, enum.Enum))
        or dataclasses.is_dataclass(value)
        or _is_model(value)
    )


def jsonable(value: Any) -> Any:
    """A handler's return value as JSON data (the core decides what it means on the wire)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, _HELPERS):
        return value.to_block()
    if isinstance(value, dict):
        return value
    if isinstance(value, (list, tuple)):
        if any(_convertible(v) for v in value):
            return [jsonable(v) for v in value]
        return value
    if _is_model(value):
        return value.model_dump(mode="json", by_alias=True)
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)
