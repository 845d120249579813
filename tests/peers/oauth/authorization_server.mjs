// An OAuth 2.1 authorization server for rho's tests, on the pinned oidc-provider: the real
// thing a person would log in to, kept on loopback with in-memory storage.
//
// Usage: node authorization_server.mjs [port]   (or AS_PORT; 0 picks a free port)
// stdout: exactly one line, `ready http://127.0.0.1:<port>`, once listening (the issuer).
// stderr: everything else (oidc-provider's start-up warnings about dev keys and
// devInteractions are expected here).
//
// What it offers, and why:
// - issuer `http://127.0.0.1:<port>` at the root path, so both discovery documents are served
//   and the issuer string has no trailing slash;
// - open dynamic client registration (AS_REGISTRATION=closed: the endpoint is still advertised
//   but refuses anyone without an initial access token, as a locked-down server does); PKCE required for every client (S256 only); a client's
//   registered `scope` is widened to all supported scopes so step-up works without
//   re-registering (AS_CLIENT_SCOPE=strict: oidc-provider's own rule, only the registered ones);
// - resource indicators: any `http://127.0.0.1:<port>/mcp` is a resource server with scopes
//   `mcp:tools` and `mcp:admin`, opaque access tokens (the protected server introspects them),
//   lifetime `AS_ACCESS_TOKEN_TTL` seconds (default 3600);
// - a refresh token whenever the client may use the refresh_token grant: stock oidc-provider
//   only issues one for `offline_access` with `prompt=consent`, which MCP clients do not send;
//   refresh tokens of public clients rotate on every use (the default);
// - introspection for the confidential client `rs` (secret `AS_RS_CLIENT_SECRET`, default
//   `rs-test-secret`), revocation, and the devInteractions login and consent pages;
// - test hooks beside the provider (loopback callers only):
//   `GET /test/stats` -> {"token_requests", "refresh_requests", "registrations",
//   "authorization_requests", "introspection_requests", "revocation_requests"} counted since
//   start; `POST /test/revoke-all` revokes every grant with all its codes and tokens, or only
//   the refresh tokens with `?only=refresh_token`; answers {"revoked": n}.

import http from 'node:http';

// oidc-provider writes its notices with console.info; stdout belongs to the ready line.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const { default: Provider, errors } = await import('oidc-provider');

const requested = process.argv[2] ?? process.env.AS_PORT ?? '0';
const port = Number(requested);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`authorization_server: bad port ${JSON.stringify(requested)}`);
  process.exit(2);
}
const accessTokenTTL = Number(process.env.AS_ACCESS_TOKEN_TTL ?? '3600');
if (!Number.isInteger(accessTokenTTL) || accessTokenTTL <= 0) {
  console.error(`authorization_server: bad AS_ACCESS_TOKEN_TTL ${process.env.AS_ACCESS_TOKEN_TTL}`);
  process.exit(2);
}
const rsSecret = process.env.AS_RS_CLIENT_SECRET ?? 'rs-test-secret';

const RESOURCE = /^http:\/\/127\.0\.0\.1:\d{1,5}\/mcp$/;
const RESOURCE_SCOPES = 'mcp:tools mcp:admin';
const SUPPORTED_SCOPES = `openid offline_access ${RESOURCE_SCOPES}`;
const strictClientScope = process.env.AS_CLIENT_SCOPE === 'strict';
if (!['open', 'closed', undefined].includes(process.env.AS_REGISTRATION)) {
  console.error(`authorization_server: bad AS_REGISTRATION ${process.env.AS_REGISTRATION}; use open or closed`);
  process.exit(2);
}
// A random initial access token nobody is told: registration is advertised and always refused.
const registrationClosed = process.env.AS_REGISTRATION === 'closed';
if (!['strict', 'widen', undefined].includes(process.env.AS_CLIENT_SCOPE)) {
  console.error(`authorization_server: bad AS_CLIENT_SCOPE ${process.env.AS_CLIENT_SCOPE}; use widen or strict`);
  process.exit(2);
}

// In-memory storage the test hooks can enumerate (oidc-provider's own memory adapter cannot
// be listed, so "revoke everything" would be impossible with it).
const store = new Map();

function live(key) {
  const entry = store.get(key);
  if (!entry) return undefined;
  if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry.payload;
}

class TestAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined;
    store.set(this.key(id), { model: this.model, payload, expiresAt });
  }

  async find(id) {
    return live(this.key(id));
  }

  async findByUid(uid) {
    for (const [key, entry] of store) {
      if (entry.model === this.model && entry.payload.uid === uid) return live(key);
    }
    return undefined;
  }

  async findByUserCode(userCode) {
    for (const [key, entry] of store) {
      if (entry.model === this.model && entry.payload.userCode === userCode) return live(key);
    }
    return undefined;
  }

  async consume(id) {
    const payload = live(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    for (const [key, entry] of store) {
      if (entry.payload.grantId === grantId) store.delete(key);
    }
  }
}

const GRANT_MEMBERS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'Grant']);

function revokeAll(only) {
  let revoked = 0;
  for (const [key, entry] of store) {
    const hit = only ? entry.model === only : GRANT_MEMBERS.has(entry.model);
    if (hit) {
      store.delete(key);
      revoked += 1;
    }
  }
  return revoked;
}

const stats = {
  token_requests: 0,
  refresh_requests: 0,
  registrations: 0,
  authorization_requests: 0,
  introspection_requests: 0,
  revocation_requests: 0,
};

function configuration() {
  return {
    adapter: TestAdapter,
    clients: [
      {
        client_id: 'rs',
        client_secret: rsSecret,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
    ],
    cookies: { keys: ['rho-test-cookie-key-1', 'rho-test-cookie-key-2'] },
    scopes: SUPPORTED_SCOPES.split(' '),
    // OAuth 2.1: the authorization code flow only (no implicit or hybrid responses).
    responseTypes: ['code'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: registrationClosed
        ? { enabled: true, initialAccessToken: crypto.randomUUID() }
        : { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!RESOURCE.test(resource)) {
            throw new errors.InvalidTarget(`unknown resource ${resource}`);
          }
          return {
            scope: RESOURCE_SCOPES,
            accessTokenFormat: 'opaque',
            accessTokenTTL,
          };
        },
      },
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  };
}

// oidc-provider lets a client ask only for the scopes it registered. MCP clients register the
// scopes they want first (the protected resource's `scopes_supported`) and ask for more on a
// 403 insufficient_scope later, so by default a registration is widened to every supported
// scope (RFC 7591 lets the server replace requested metadata). AS_CLIENT_SCOPE=strict keeps
// the stock rule, for a test of the invalid_scope answer.
async function widenRegisteredScope(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && typeof body.scope === 'string') {
    body.scope = SUPPORTED_SCOPES;
    ctx.request.body = JSON.stringify(body);
  } else {
    // Not ours to judge: oidc-provider answers it as it would have.
    ctx.request.body = text;
  }
}

function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

function loopback(req) {
  const peer = req.socket.remoteAddress ?? '';
  return peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1';
}

function testHook(req, res) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (!loopback(req)) {
    json(res, 403, { error: 'test hooks answer loopback callers only' });
  } else if (url.pathname === '/test/stats' && req.method === 'GET') {
    json(res, 200, stats);
  } else if (url.pathname === '/test/revoke-all' && req.method === 'POST') {
    const only = url.searchParams.get('only');
    if (only !== null && only !== 'refresh_token') {
      json(res, 400, { error: `unknown only=${only}; use refresh_token` });
      return;
    }
    const revoked = revokeAll(only === null ? undefined : 'RefreshToken');
    console.error(`authorization_server: revoked ${revoked} grant members`);
    json(res, 200, { revoked });
  } else {
    json(res, 404, { error: 'unknown test hook' });
  }
}

// The server listens before the provider exists: the issuer has to carry the real port,
// which is only known once port 0 is bound.
let handler;
const server = http.createServer((req, res) => {
  if ((req.url ?? '').startsWith('/test/')) {
    testHook(req, res);
  } else {
    handler(req, res);
  }
});

server.on('error', (error) => {
  console.error(`authorization_server: ${error.message}`);
  process.exit(1);
});

server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration());
  provider.use(async (ctx, next) => {
    const post = ctx.method === 'POST';
    if (post && ctx.path === '/token') stats.token_requests += 1;
    if (post && ctx.path === '/reg') stats.registrations += 1;
    if (post && ctx.path === '/token/introspection') stats.introspection_requests += 1;
    if (post && ctx.path === '/token/revocation') stats.revocation_requests += 1;
    if (ctx.path === '/auth') stats.authorization_requests += 1;
    if (post && ctx.path === '/reg' && !strictClientScope && ctx.is('application/json')) {
      await widenRegisteredScope(ctx);
    }
    await next();
    if (post && ctx.path === '/token') {
      const grantType = ctx.oidc?.params?.grant_type ?? ctx.oidc?.body?.grant_type;
      if (grantType === 'refresh_token') stats.refresh_requests += 1;
    }
    console.error(`authorization_server: ${ctx.method} ${ctx.path} -> ${ctx.status}`);
  });
  provider.on('server_error', (_ctx, error) => console.error('authorization_server: server error', error));
  handler = provider.callback();
  process.stdout.write(`ready ${issuer}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => process.exit(0));
}
