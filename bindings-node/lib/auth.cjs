'use strict';
// Authorization options for the client (`Client.http(url, {auth})`) and the server
// (`server.runHttp({auth})`): the user's functions are split from the plain values, which go
// to the native core as JSON. The OAuth flow and every check on a token live in the core.

const { wrap } = require('./handlers.cjs');

/**
 * `auth` of `Client.http` → `[plain options, authorize callback]` for the addon.
 * @returns {[object | undefined, ((json: string) => Promise<string>) | undefined]}
 */
function clientAuth(auth) {
  if (auth === undefined || auth === null) return [undefined, undefined];
  if (typeof auth !== 'object') throw new TypeError('Client.http: `auth` must be an object of OAuth options');
  const { authorize, ...plain } = auth;
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new TypeError('Client.http: `auth.authorize` must be a function (url) => redirectedUrl');
  }
  // The core refuses any hostile URL before it reaches the callback; what comes back is the
  // URL the authorization server redirected to, as a string (a URL object works too).
  return [plain, authorize ? wrap((url) => authorize(url)) : undefined];
}

/**
 * `runHttp` options → `[options for the addon, verifier callback]`.
 * @returns {[object, ((json: string) => Promise<string>) | undefined]}
 */
function serverAuth(options) {
  const { auth, ...rest } = options;
  if (auth === undefined || auth === null) return [rest, undefined];
  if (typeof auth !== 'function') {
    throw new TypeError('runHttp: `auth` must be a function (token) => claims | null');
  }
  return [{ ...rest, auth: true }, wrap((token) => auth(token))];
}

module.exports = { clientAuth, serverAuth };
