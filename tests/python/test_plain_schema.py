"""Tools with plain annotations get their schemas without pydantic, and those schemas are the
ones pydantic derives: the same tool definition either way, only cheaper to start.

The comparison builds each signature's schema both ways (the plain path and the pydantic
path of ``_signature``) and requires them equal, keys in the same order."""

from __future__ import annotations

# The old spellings (`Optional`, `Union`) are what many tools are written with: kept on purpose.
import json
import subprocess
import sys
import textwrap
from typing import Any, Literal, Optional, Union

import pydantic
import pytest
from oxmcp import _plain_schema, _signature


def _both(params: list[tuple[str, Any, Any]], docs: dict[str, str] | None = None) -> tuple:
    docs = docs or {}
    plain = _signature._plain_input_schema(params, docs)
    derived, _ = _signature._pydantic_input_schema("f", params, docs)
    return plain, derived


REQ = __import__("inspect").Parameter.empty

PLAIN_CASES = [
    [("text", str, REQ)],
    [("n", int, 3), ("x", float, REQ), ("flag", bool, False)],
    [("maybe", Optional[str], None), ("either", str | None, REQ)],  # noqa: UP045
    [("u", Union[int, str], REQ), ("v", int | float | None, 1.5)],  # noqa: UP007
    [("items", list, REQ), ("names", list[str], ["a", "b"]), ("rows", list[dict], [])],
    [("d", dict, REQ), ("counts", dict[str, int], {"a": 1}), ("any_d", dict[str, Any], {})],
    [("anything", Any, REQ), ("anything_or_none", Any, None)],
    [("mode", Literal["fast", "slow"], "fast"), ("one", Literal["x"], REQ)],
    [("level", Literal[1, 2, 3], REQ)],
    [("nested", list[list[int | None]], REQ), ("deep", dict[str, list[str]], REQ)],
    [("nothing", type(None), None)],
    [],
]


@pytest.mark.parametrize(
    "params", PLAIN_CASES, ids=lambda p: ",".join(n for n, _, _ in p) or "none"
)
def test_plain_schemas_are_pydantics(params: list[tuple[str, Any, Any]]) -> None:
    plain, derived = _both(params)
    assert plain is not None
    assert json.dumps(plain) == json.dumps(derived)


def test_descriptions_from_the_docstring_match_too() -> None:
    params = [("city", str, REQ), ("days", int, 3)]
    plain, derived = _both(params, {"city": "The city name", "days": "How many days"})
    assert plain is not None
    assert json.dumps(plain) == json.dumps(derived)


@pytest.mark.parametrize(
    "annotation",
    [str, int, float, bool, dict, list, list[str], dict[str, int], Optional[int], int | str],  # noqa: UP045
)
def test_return_schemas_are_pydantics(annotation: Any) -> None:
    plain = _plain_schema.annotation_schema(annotation)
    assert plain == pydantic.TypeAdapter(annotation).json_schema(mode="serialization")


class Point(pydantic.BaseModel):
    x: int


@pytest.mark.parametrize(
    "annotation, default",
    [
        (Point, REQ),  # a model: pydantic's
        (tuple[int, int], REQ),  # tuples have prefixItems in pydantic
        (dict[int, str], REQ),  # keys that are not strings
        (set[str], REQ),
        (Literal[True], REQ),  # bool literals, mixed literals: pydantic's rules
        (Literal["a", 1], REQ),
        (Optional[Literal["a"]], None),  # noqa: UP045
        (Union[Any, int], REQ),  # noqa: UP007
        (str, ("a",)),  # a default that is not JSON as it is
        (str, pydantic.Field(default="x", description="d")),
        ("NotResolvable", REQ),  # an annotation left as a string
    ],
)
def test_anything_else_falls_back_to_pydantic(annotation: Any, default: Any) -> None:
    assert _plain_schema.property_schema(annotation, default, None) is None


def test_a_model_parameter_still_validates_through_pydantic() -> None:
    def move(p: Point, steps: int = 1) -> str:
        return f"{p.x + steps}"

    derived = _signature.derive(move)
    assert derived.model is not None
    assert _signature.arguments(derived, {"p": {"x": 1}})["p"] == Point(x=1)
    with pytest.raises(pydantic.ValidationError):
        _signature.arguments(derived, {"p": {"x": "not a number"}})


def test_a_server_with_plain_tools_never_imports_pydantic() -> None:
    script = textwrap.dedent(
        """
        import sys
        from typing import Literal
        from oxmcp import Server

        server = Server("plain")

        @server.tool()
        def echo(text: str, times: int = 1, mode: Literal["a", "b"] = "a") -> str:
            '''Echo.

            Args:
                text: what to say
            '''
            return text * times

        @server.tool()
        async def table(rows: list[dict[str, int]] | None = None) -> dict:
            return {"rows": rows or []}

        print("pydantic" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_model_tool_imports_it_when_registered() -> None:
    script = textwrap.dedent(
        """
        import sys
        import dataclasses
        from oxmcp import Server

        @dataclasses.dataclass
        class Box:
            w: int

        server = Server("models")
        print("pydantic" in sys.modules)

        @server.tool()
        def area(box: Box) -> int:
            return box.w * box.w

        print("pydantic" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
