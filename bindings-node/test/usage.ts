// Type-checked with `tsc --noEmit --strict` against the installed package's index.d.ts: the
// README's shapes must compile, and misuse must not (see the @ts-expect-error lines).
import { AuthError, Client, ErrorCode, McpError, RpcError, Server, type AccessClaims, type CallToolResult, type Context, type VerifyToken } from 'oxmcp';

const server = new Server({ name: 'weather', version: '1.0.0', instructions: 'Weather.' });
server.tool(
  'get_weather',
  { description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
  async (args: { city: string }, ctx: Context) => {
    await ctx.reportProgress(1, 2, 'looking');
    if (ctx.signal.aborted) throw new McpError(ErrorCode.InternalError, 'aborted');
    return { city: args.city, temperature_c: 21 };
  },
);
server.resource('test://a', { mimeType: 'text/plain' }, (uri) => ({ contents: [{ uri, text: 'a' }] }));
server.prompt('p', { arguments: [{ name: 'x', required: true }] }, (args) => ({
  messages: [{ role: 'user', content: { type: 'text', text: args.x ?? '' } }],
}));
// @ts-expect-error a Server needs a version
new Server({ name: 'x' });

async function main(): Promise<void> {
  const { url } = await server.runHttp({ port: 0, stateless: false });
  const client = await Client.http(url, { headers: { 'x-test': '1' } });
  const result: CallToolResult = await client.callTool('get_weather', { city: 'Oslo' }, { timeout: 5000, signal: AbortSignal.timeout(10_000) });
  const first = result.content[0];
  if (first.type === 'text') console.log(first.text.toUpperCase());
  const stdio = await Client.stdio('node', ['server.mjs'], { env: { A: 'b' }, cwd: '.' });
  const { tools } = await stdio.listTools();
  console.log(tools.map((t) => t.inputSchema));
  try {
    await stdio.readResource({ uri: 'test://a' });
  } catch (e) {
    if (e instanceof RpcError) console.log(e.code.toFixed(0));
  }
  // @ts-expect-error arguments must be an object
  await stdio.callTool('get_weather', 'Oslo');
  await stdio.close();
  await client.close();
  await server.close();
}
void main;

async function authorization(): Promise<void> {
  const verify: VerifyToken = async (token) =>
    token === 'good' ? { subject: 'ada', scopes: ['mcp'], audience: 'https://mcp.example.com/mcp', expiresAt: 2_000_000_000 } : null;
  const secured = new Server({ name: 'secured', version: '1.0.0', stateKey: 'ab'.repeat(32) });
  await secured.runHttp({
    port: 8080,
    auth: verify,
    authorizationServers: ['https://auth.example.com'],
    requiredScopes: ['mcp'],
    resource: 'https://mcp.example.com/mcp',
    store: 'redis://127.0.0.1:6379/',
  });
  const claims: AccessClaims = { scopes: 'a b', audience: ['x'] };
  console.log(claims.scopes);
  // @ts-expect-error the verifier takes the token string
  await secured.runHttp({ auth: (token: number) => null });
  // @ts-expect-error the state key belongs to the server, not to runHttp
  await secured.runHttp({ stateKey: 'ab'.repeat(32) });

  try {
    const c = await Client.http('https://mcp.example.com/mcp', {
      auth: {
        clientId: 'pre-registered',
        clientSecret: 's3cret',
        tokenEndpointAuth: 'client_secret_post',
        redirectUri: 'http://127.0.0.1:8765/callback',
        tokenStore: '/tmp/oxmcp-tokens',
        authorize: async (url: string) => new URL(url),
      },
    });
    await c.close();
  } catch (e) {
    if (e instanceof AuthError) console.log(e.message);
  }
  // @ts-expect-error only the two user-facing grants are named
  await Client.http('https://x/mcp', { auth: { grant: 'password' } });
  // @ts-expect-error authorize returns the redirected URL
  await Client.http('https://x/mcp', { auth: { authorize: async () => 42 } });
}
void authorization;
