// Authorization through the Node binding, over real sockets on 127.0.0.1:
//
// - `server.runHttp({ auth })`: the core's resource server with a JavaScript token verifier
//   (401 without or with a bad token, 403 for a missing scope, the protected-resource metadata,
//   a verifier that throws or returns junk refused cleanly);
// - `Client.http(url, { auth })`: the core's OAuth client against an authorization server
//   written here on node:http (metadata, dynamic registration, PKCE S256 checked, tokens the
//   Node server's verifier looks up), headless and with a JavaScript `authorize` callback, and
//   the hostile cases (a bad authorization URL, a failing or lying callback).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { AuthError, Client, InvalidArgumentError, McpError, Server } from 'oxmcp';
import { freePort } from './helpers.mjs';

const text = (r) => r.content.map((c) => c.text).join('');
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** POSTs an initialize with `token` (or none). */
function post(url, token) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(INIT) });
}

/**
 * An authorization server on 127.0.0.1 that approves everyone: RFC 8414 metadata, RFC 7591
 * registration, `/authorize` redirecting with a code, `/token` checking PKCE. `tokens` maps
 * each issued access token to what it grants, for the resource server's verifier.
 */
async function authorizationServer({ authorizationEndpoint } = {}) {
  const tokens = new Map();
  const codes = new Map();
  const seen = { register: 0, authorize: 0, token: 0 };
  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url, issuer);
    let body = '';
    for await (const chunk of req) body += chunk;
    const json = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (u.pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer,
        authorization_endpoint: authorizationEndpoint ?? `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        scopes_supported: ['mcp'],
      });
    }
    if (u.pathname === '/register' && req.method === 'POST') {
      seen.register += 1;
      const asked = JSON.parse(body);
      return json(201, { ...asked, client_id: `client-${seen.register}`, token_endpoint_auth_method: 'none' });
    }
    if (u.pathname === '/authorize') {
      seen.authorize += 1;
      const p = u.searchParams;
      if (p.get('code_challenge_method') !== 'S256' || !p.get('state') || !p.get('resource')) {
        return json(400, { error: 'invalid_request' });
      }
      const code = randomBytes(12).toString('hex');
      codes.set(code, { challenge: p.get('code_challenge'), resource: p.get('resource'), scope: p.get('scope') ?? '' });
      const back = new URL(p.get('redirect_uri'));
      back.searchParams.set('code', code);
      back.searchParams.set('state', p.get('state'));
      res.writeHead(302, { location: back.href });
      return res.end();
    }
    if (u.pathname === '/token' && req.method === 'POST') {
      seen.token += 1;
      const form = new URLSearchParams(body);
      const grant = codes.get(form.get('code'));
      codes.delete(form.get('code'));
      const verifier = form.get('code_verifier') ?? '';
      const s256 = createHash('sha256').update(verifier).digest('base64url');
      if (form.get('grant_type') !== 'authorization_code' || !grant || grant.challenge !== s256) {
        return json(400, { error: 'invalid_grant' });
      }
      const access = randomBytes(16).toString('hex');
      tokens.set(access, { scopes: grant.scope.split(' ').filter(Boolean), audience: grant.resource });
      return json(200, { access_token: access, token_type: 'Bearer', expires_in: 3600, scope: grant.scope });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  return { issuer, tokens, seen, close: () => new Promise((r) => server.close(r)) };
}

/** A Node MCP server protected by `verify`, on a fixed port (so its resource URL is known). */
async function protectedServer(verify, options = {}) {
  const server = new Server({ name: 'protected', version: '1.0.0' });
  server.tool('whoami', { description: 'Echo' }, () => 'ok');
  const port = await freePort();
  const { url } = await server.runHttp({
    port,
    auth: verify,
    authorizationServers: ['https://auth.example.com'],
    requiredScopes: ['mcp'],
    ...options,
  });
  return { server, url };
}

const HOUR = () => Math.floor(Date.now() / 1000) + 3600;

test('auth server: no token 401, bad 401, missing scope 403, good 200, metadata served', async () => {
  let calls = 0;
  const { server, url } = await protectedServer(async (token) => {
    calls += 1;
    if (token === 'good') return { subject: 'ada', scopes: ['mcp'], audience: url, expiresAt: HOUR() };
    if (token === 'narrow') return { subject: 'ada', scopes: 'read', audience: url, expiresAt: HOUR() };
    if (token === 'expired') return { subject: 'ada', scopes: ['mcp'], audience: url, expiresAt: 1000 };
    if (token === 'elsewhere') return { subject: 'ada', scopes: ['mcp'], audience: 'https://other.example/mcp' };
    return null;
  });
  try {
    const none = await post(url);
    assert.equal(none.status, 401);
    const challenge = none.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer /);
    const metadataUrl = challenge.match(/resource_metadata="([^"]+)"/)?.[1];
    assert.ok(metadataUrl, challenge);
    assert.equal(calls, 0, 'no token: the verifier is not called');

    const metadata = await (await fetch(metadataUrl)).json();
    assert.equal(metadata.resource, url);
    assert.deepEqual(metadata.authorization_servers, ['https://auth.example.com']);
    assert.deepEqual(metadata.scopes_supported, ['mcp']);

    for (const bad of ['nonsense', 'expired', 'elsewhere']) {
      const r = await post(url, bad);
      assert.equal(r.status, 401, bad);
      assert.match(r.headers.get('www-authenticate') ?? '', /error="invalid_token"/, bad);
    }
    const narrow = await post(url, 'narrow');
    assert.equal(narrow.status, 403);
    assert.match(narrow.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.match(narrow.headers.get('www-authenticate') ?? '', /scope="mcp"/);

    assert.equal((await post(url, 'good')).status, 200);
    const client = await Client.http(url, { headers: { authorization: 'Bearer good' } });
    assert.equal(text(await client.callTool('whoami', {})), 'ok');
    await client.close();
  } finally {
    await server.close();
  }
});

test('auth server: a verifier that throws, rejects or returns junk refuses with 401, and serving goes on', async () => {
  const { server, url } = await protectedServer((token) => {
    if (token === 'sync-throw') throw new Error('database down');
    if (token === 'reject') return Promise.reject(new TypeError('boom'));
    if (token === 'junk') return 42;
    if (token === 'bad-expiry') return { scopes: ['mcp'], audience: url, expiresAt: 'tomorrow' };
    if (token === 'cycle') {
      const o = { scopes: ['mcp'], audience: url };
      o.self = o;
      return o;
    }
    return { scopes: ['mcp'], audience: url };
  });
  try {
    for (const bad of ['sync-throw', 'reject', 'junk', 'bad-expiry', 'cycle']) {
      const r = await post(url, bad);
      assert.equal(r.status, 401, bad);
      assert.match(r.headers.get('www-authenticate') ?? '', /invalid_token/, bad);
    }
    assert.equal((await post(url, 'fine')).status, 200);
  } finally {
    await server.close();
  }
});

test('auth server: misconfigurations are typed errors before anything listens', async () => {
  const s = new Server({ name: 'x', version: '1' });
  await assert.rejects(s.runHttp({ auth: 'not a function', port: await freePort() }), TypeError);
  // No authorization server to name in the metadata.
  await assert.rejects(s.runHttp({ auth: () => null, port: await freePort() }), InvalidArgumentError);
  // An ephemeral port: the resource URL is unknown, so it must be given.
  await assert.rejects(
    s.runHttp({ auth: () => null, authorizationServers: ['https://a.example'] }),
    (e) => e instanceof InvalidArgumentError && /resource/.test(e.message),
  );
  await assert.rejects(s.runHttp({ authorizationServers: ['https://a.example'] }), InvalidArgumentError);
  // Still usable after the refusals.
  const { url } = await s.runHttp({});
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  await s.close();
});

/** A protected Node server whose verifier trusts the tokens `as` issued for it. */
async function serverTrusting(as) {
  return protectedServer(
    (token) => {
      const t = as.tokens.get(token);
      return t ? { subject: 'user', scopes: t.scopes, audience: t.audience, expiresAt: HOUR() } : null;
    },
    { authorizationServers: [as.issuer] },
  );
}

test('auth client: headless OAuth (discovery, registration, PKCE, token) then calls go through', async () => {
  const as = await authorizationServer();
  const { server, url } = await serverTrusting(as);
  try {
    const client = await Client.http(url, { auth: { allowLoopback: true } });
    assert.equal(text(await client.callTool('whoami', {})), 'ok');
    assert.deepEqual(as.seen, { register: 1, authorize: 1, token: 1 });
    await client.close();
  } finally {
    await server.close();
    await as.close();
  }
});

test('auth client: a JavaScript authorize callback does the user step; a token store keeps the result', async () => {
  const as = await authorizationServer();
  const { server, url } = await serverTrusting(as);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxmcp-tokens-'));
  try {
    const opened = [];
    const authorize = async (authorizationUrl) => {
      opened.push(authorizationUrl);
      // What a browser would do: follow the authorization server's redirect.
      const r = await fetch(authorizationUrl, { redirect: 'manual' });
      return new URL(r.headers.get('location'));
    };
    const auth = { allowLoopback: true, redirectUri: 'http://127.0.0.1:9/cb', tokenStore: dir, authorize };
    const first = await Client.http(url, { auth });
    assert.equal(text(await first.callTool('whoami', {})), 'ok');
    await first.close();
    assert.equal(opened.length, 1);
    const asked = new URL(opened[0]);
    assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(asked.searchParams.get('resource'), url);
    assert.equal(asked.searchParams.get('redirect_uri'), 'http://127.0.0.1:9/cb');
    for (const f of fs.readdirSync(dir)) {
      assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
    }

    // A second client with the same store uses the stored token: no new user step.
    const second = await Client.http(url, { auth });
    assert.equal(text(await second.callTool('whoami', {})), 'ok');
    await second.close();
    assert.equal(opened.length, 1);
    assert.equal(as.seen.authorize, 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await server.close();
    await as.close();
  }
});

test('auth client: a failing, lying or hostile user step is an AuthError, never a hang', async () => {
  const as = await authorizationServer();
  const { server, url } = await serverTrusting(as);
  try {
    const cases = [
      [() => { throw new Error('the user closed the browser'); }, /closed the browser/],
      [async () => 42, /must resolve to the URL/],
      [async () => 'http://localhost/callback?code=x&state=forged', /state/i],
    ];
    for (const [authorize, why] of cases) {
      await assert.rejects(
        Client.http(url, { auth: { allowLoopback: true, authorize } }),
        (e) => e instanceof AuthError && why.test(e.message),
      );
    }
    // Without loopback allowed, discovery refuses to reach 127.0.0.1 at all.
    const before = { ...as.seen };
    await assert.rejects(Client.http(url, { auth: {} }), AuthError);
    assert.deepEqual(as.seen, before);
  } finally {
    await server.close();
    await as.close();
  }

  // An authorization endpoint the core refuses to open: the callback is never called.
  const hostile = await authorizationServer({ authorizationEndpoint: 'javascript:alert(1)' });
  const guarded = await serverTrusting(hostile);
  try {
    let called = false;
    await assert.rejects(
      Client.http(guarded.url, { auth: { allowLoopback: true, authorize: () => { called = true; return ''; } } }),
      AuthError,
    );
    assert.equal(called, false);
  } finally {
    await guarded.server.close();
    await hostile.close();
  }
});

test('auth client: bad options are typed errors', async () => {
  const url = 'http://127.0.0.1:9/mcp';
  await assert.rejects(Client.http(url, { auth: 'token' }), TypeError);
  await assert.rejects(Client.http(url, { auth: { authorize: 'x' } }), TypeError);
  await assert.rejects(Client.http(url, { auth: { grant: 'password' } }), InvalidArgumentError);
  // The core reads the settings; the message names them as JavaScript spells them.
  const refused = (why) => (e) => e instanceof InvalidArgumentError && why.test(e.message);
  await assert.rejects(Client.http(url, { auth: { clientSecret: 's' } }), refused(/auth: clientSecret without clientId/));
  await assert.rejects(Client.http(url, { auth: { tokenEndpointAuth: 'none' } }), refused(/tokenEndpointAuth without clientId/));
  await assert.rejects(
    Client.http(url, { auth: { tokenEndpointAuth: 'magic', clientId: 'c' } }),
    refused(/unknown tokenEndpointAuth `magic` \(one of: none, client_secret_basic, client_secret_post, private_key_jwt\)/),
  );
  await assert.rejects(Client.http(url, { auth: { applicationType: 'desktop' } }), refused(/unknown applicationType `desktop`/));
  const enterprise = { idpTokenEndpoint: 'https://idp.example/token', idpClientId: 'c', idToken: 't' };
  await assert.rejects(Client.http(url, { auth: { grant: 'client_credentials', enterprise } }), refused(/enterprise and grant/));
  await assert.rejects(Client.http(url, { auth: { enterprise: { idpTokenEndpoint: 'x' } } }), refused(/missing field/));
  await assert.rejects(Client.http(url, { auth: { clientId: 5 } }), refused(/invalid type/));
  await assert.rejects(Client.http(url, { auth: { allowOrigins: 'https://a.example' } }), refused(/invalid type/));
  await assert.rejects(Client.http(url, { auth: { redirectUri: 'file:///etc/passwd' } }), McpError);
  await assert.rejects(Client.http(url, { auth: { privateKeyPem: 'not a key', clientId: 'c' } }), McpError);
  await assert.rejects(Client.http(url, { auth: { unknownOption: true } }), InvalidArgumentError);
  await assert.rejects(Client.stdio(process.execPath, ['-e', ''], { auth: { allowLoopback: true } }), InvalidArgumentError);
});

