#!/usr/bin/env node
// A stdio MCP server with one tool, `get_weather(city)`, over embedded data: no API key, no
// network. It answers exactly as the Rust `weather_server` example does (same schema, text,
// structured content and error text) from a byte-identical copy of examples/weather/cities.json.
//
//   npx --yes -p oxmcp -p oxmcp-weather oxmcp-weather
import { readFileSync } from 'node:fs';
import { Server } from 'oxmcp';

const { cities } = JSON.parse(readFileSync(new URL('../cities.json', import.meta.url), 'utf8'));

/** Case-insensitive match on the name or an alias (`北京` finds Beijing), ignoring outer spaces. */
function lookup(asked) {
  const want = asked.trim().toLowerCase();
  return cities.find((c) => c.name.toLowerCase() === want || c.aliases.some((a) => a.toLowerCase() === want));
}

const server = new Server({
  name: 'weather',
  version: '0.1.0',
  instructions: 'Current weather for a handful of world cities, from embedded data.',
});

server.tool(
  'get_weather',
  {
    description: 'Get the current weather for a city.',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string', description: 'City name, e.g. Beijing or 北京' } },
      required: ['city'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        temperature_c: { type: 'number' },
        conditions: { type: 'string' },
        humidity_pct: { type: 'integer' },
        wind_kmh: { type: 'integer' },
      },
      required: ['city', 'temperature_c', 'conditions', 'humidity_pct', 'wind_kmh'],
    },
    annotations: { title: 'Current weather', readOnlyHint: true, openWorldHint: false },
  },
  ({ city }) => {
    const found = lookup(city ?? '');
    if (!found) {
      throw new Error(`No weather data for \`${city}\`. Known cities: ${cities.map((c) => c.name).join(', ')}.`);
    }
    const report = {
      city: found.name,
      temperature_c: found.temperature_c,
      conditions: found.conditions,
      humidity_pct: found.humidity_pct,
      wind_kmh: found.wind_kmh,
    };
    return {
      content: [
        {
          type: 'text',
          text: `${found.name}: ${found.temperature_c.toFixed(1)} °C, ${found.conditions}, humidity ${found.humidity_pct}%, wind ${found.wind_kmh} km/h`,
        },
      ],
      structuredContent: report,
    };
  },
);

// stdio by default; `--ws --port N` serves WebSocket on ws://127.0.0.1:N/mcp instead.
const args = process.argv.slice(2);
if (args.includes('--ws')) {
  const at = args.indexOf('--port');
  const { url } = await server.runWebSocket({ port: at >= 0 ? Number(args[at + 1]) : 8000 });
  console.error(`listening on ${url}`);
  process.on('SIGINT', () => server.close());
  process.on('SIGTERM', () => server.close());
} else {
  await server.runStdio();
}
