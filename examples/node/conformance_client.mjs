// The conformance client on the Node binding: what the official suite's client scenarios
// drive, as examples/rust/conformance_client.rs does it.
//
// `node conformance_client.mjs URL`, with the scenario in MCP_CONFORMANCE_SCENARIO (the harness
// sets it and appends its mock server's URL). Exits non-zero when the scenario fails here.
import { Client } from 'oxmcp';

const url = process.argv[2];
if (!url) {
  console.error('usage: conformance_client.mjs URL');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
let context = {};
try {
  context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') ?? {};
} catch {
  context = {};
}

/** The OAuth settings a scenario's context asks for (as the Rust conformance client maps them). */
function oauth(c) {
  const need = (k) => {
    if (typeof c[k] !== 'string') throw new Error(`context: no ${k}`);
    return c[k];
  };
  const o = {
    redirectUri: 'http://localhost:3000/callback',
    // The harness's servers listen on loopback.
    allowLoopback: true,
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  };
  // 0.1.16 names no context for the SEP-990 scenario; its fields say what it is.
  if (typeof c.idp_id_token === 'string') {
    return {
      ...o,
      enterprise: { idpTokenEndpoint: need('idp_token_endpoint'), idpClientId: need('idp_client_id'), idToken: c.idp_id_token },
      clientId: need('client_id'),
      clientSecret: need('client_secret'),
    };
  }
  switch (c.name) {
    case 'auth/pre-registration':
      return { ...o, clientId: need('client_id'), ...(typeof c.client_secret === 'string' ? { clientSecret: c.client_secret } : {}) };
    case 'auth/client-credentials-basic':
      return { ...o, grant: 'client_credentials', clientId: need('client_id'), clientSecret: need('client_secret') };
    case 'auth/client-credentials-jwt':
      return { ...o, grant: 'client_credentials', clientId: need('client_id'), privateKeyPem: need('private_key_pem') };
    default:
      return o;
  }
}

const client = await Client.http(url, {
  name: 'oxmcp-conformance-client',
  version: '0.1.0',
  // Accept with no values: the core fills in the schema's defaults (SEP-1034).
  elicitation: async () => ({ action: 'accept', content: {} }),
  ...(scenario.startsWith('auth/') ? { auth: oauth(context) } : {}),
});
console.error(`connected: protocol ${client.protocolVersion}, server ${JSON.stringify(client.getServerVersion().name)}`);

async function allTools() {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

const tools = await allTools();
switch (scenario) {
  case 'initialize':
    break;
  case 'tools_call':
    console.error(`add_numbers: ${text(await client.callTool('add_numbers', { a: 5, b: 3 }))}`);
    break;
  case 'elicitation-sep1034-client-defaults':
    console.error(`elicitation: ${text(await client.callTool('test_client_elicitation_defaults', {}))}`);
    break;
  case 'json-schema-2020-12-preservation': {
    // Echo the focal tool's schema exactly as this client holds it.
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    if (!focal) throw new Error('server did not list json_schema_2020_12_tool');
    console.error(`json_schema_echo: ${text(await client.callTool('json_schema_echo', { schema: focal.inputSchema }))}`);
    break;
  }
  case 'sse-retry':
    console.error(`reconnection: ${text(await client.callTool('test_reconnection', {}))}`);
    break;
  default: {
    // The harness may say which calls to make (MCP_CONFORMANCE_CONTEXT.toolCalls); otherwise
    // call every listed tool without arguments.
    const planned = Array.isArray(context.toolCalls)
      ? context.toolCalls.filter((c) => typeof c?.name === 'string').map((c) => [c.name, c.arguments ?? {}])
      : tools.map((t) => [t.name, {}]);
    for (const [name, args] of planned) {
      if (!tools.some((t) => t.name === name)) {
        console.error(`${name}: not offered by the server (or refused), not called`);
        continue;
      }
      console.error(`${name}: ${text(await client.callTool(name, args))}`);
    }
  }
}
await client.close();
