// A stdio MCP server (2025-06-18, written out by hand so that nothing sanitizes it on the way)
// whose every string is hostile to a web page: markup in names, descriptions and results,
// a `javascript:` resource link, an SVG image. The page must show all of it as text.
import readline from "node:readline";

const XSS = `<img src=x onerror="window.__pwned=1">`;
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const tool = {
  name: `evil${XSS}`,
  description: `<script>window.__pwned=2</script>`,
  inputSchema: { type: "object", properties: { [`q${XSS}`]: { type: "string", description: XSS } } },
};

// A tool whose structuredContent does not match its own outputSchema.
const mismatch = {
  name: "mismatch",
  inputSchema: { type: "object" },
  outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
};

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // notifications
  switch (m.method) {
    case "initialize":
      return send({ jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: "2025-06-18", capabilities: { tools: {} },
        serverInfo: { name: `<b onmouseover="window.__pwned=3">hostile</b>`, version: XSS },
      } });
    case "tools/list":
      return send({ jsonrpc: "2.0", id: m.id, result: { tools: [tool, mismatch] } });
    case "tools/call":
      if (m.params && m.params.name === mismatch.name) {
        return send({ jsonrpc: "2.0", id: m.id, result: {
          content: [{ type: "text", text: "n is a word" }], structuredContent: { n: "seven" },
        } });
      }
      return send({ jsonrpc: "2.0", id: m.id, result: { content: [
        { type: "text", text: `<script>window.__pwned=4</script>${XSS}` },
        { type: "resource_link", uri: "javascript:window.__pwned=5", name: XSS },
        { type: "image", mimeType: "image/svg+xml", data: "PHN2Zy8+" },
      ] } });
    case "ping":
      return send({ jsonrpc: "2.0", id: m.id, result: {} });
    default:
      return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `no ${m.method}` } });
  }
});
