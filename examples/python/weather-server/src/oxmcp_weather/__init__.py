"""A stdio MCP server with one tool, ``get_weather(city)``, over embedded data: no API key,
no network. It answers exactly as the Rust ``weather_server`` example does (same schema, same
text, same structured content, same error text), from a byte-identical ``cities.json``.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from typing import Any

from oxmcp import Server, ToolError

__all__ = ["build_server", "main"]

INPUT_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name, e.g. Beijing or 北京"}},
    "required": ["city"],
    "additionalProperties": False,
}

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature_c": {"type": "number"},
        "conditions": {"type": "string"},
        "humidity_pct": {"type": "integer"},
        "wind_kmh": {"type": "integer"},
    },
    "required": ["city", "temperature_c", "conditions", "humidity_pct", "wind_kmh"],
}


def _cities() -> list[dict[str, Any]]:
    text = resources.files(__package__).joinpath("cities.json").read_text(encoding="utf-8")
    cities: list[dict[str, Any]] = json.loads(text)["cities"]
    return cities


def build_server() -> Server:
    cities = _cities()
    server = Server(
        "weather",
        "0.1.0",
        instructions="Current weather for a handful of world cities, from embedded data.",
    )

    def get_weather(city: str) -> dict[str, Any]:
        asked = city.strip().lower()
        for c in cities:
            if c["name"].lower() == asked or any(a.lower() == asked for a in c["aliases"]):
                return {
                    "content": [
                        {
                            "type": "text",
                            "text": f"{c['name']}: {float(c['temperature_c']):.1f} °C, "
                            f"{c['conditions']}, humidity {c['humidity_pct']}%, "
                            f"wind {c['wind_kmh']} km/h",
                        }
                    ],
                    "structuredContent": {
                        "city": c["name"],
                        "temperature_c": float(c["temperature_c"]),
                        "conditions": c["conditions"],
                        "humidity_pct": c["humidity_pct"],
                        "wind_kmh": c["wind_kmh"],
                    },
                }
        known = ", ".join(c["name"] for c in cities)
        raise ToolError(f"No weather data for `{city}`. Known cities: {known}.")

    server.add_tool(
        get_weather,
        description="Get the current weather for a city.",
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        annotations={"title": "Current weather", "readOnlyHint": True, "openWorldHint": False},
    )
    return server


def main() -> None:
    """stdio by default; ``--ws --port N`` serves WebSocket on ws://127.0.0.1:N/mcp instead."""
    args = sys.argv[1:]
    if "--ws" in args:
        port = int(args[args.index("--port") + 1]) if "--port" in args else 8000
        build_server().run("ws", port=port)
    else:
        build_server().run()


if __name__ == "__main__":
    main()
