// The authorization server of the OAuth tests (crates/toolwire-cli/tests/it/
// auth.rs for the resource server, oauth.rs for the client): a real
// oidc-provider (pinned in package.json) on 127.0.0.1, issuing JWT access
// tokens (RS256, typ at+jwt) for the resource named with RFC 8707 resource
// indicators, and serving RFC 7662 introspection.
//
//   node provider.mjs RESOURCE [ACCESS_TOKEN_TTL_SECONDS]
//
// prints `ready http://127.0.0.1:PORT` on stdout once it listens; the port
// is chosen by the system, and the issuer is that URL. Access tokens live
// ACCESS_TOKEN_TTL_SECONDS (default 300).
//
// Grants:
//   client_credentials   for the static clients below
//   token exchange       RFC 8693 (urn:ietf:params:oauth:grant-type:
//                        token-exchange), registered below for `gateway`:
//                        a JWT access token of this provider (subject_token)
//                        traded for one for the `resource` asked, same
//                        `sub`, with `act` naming the client; refused
//                        (invalid_grant) for a subject token that does not
//                        verify, and for the subject `mallory`
//   authorization_code   PKCE required, with refresh tokens, for clients
//                        that register themselves (RFC 7591, /reg); the
//                        user's part approves itself (see "The user"), so
//                        a browser that only follows redirects completes
//                        the flow
//
// Static clients (client_secret_basic):
//   client-a, client-b   JWT access tokens; scopes mcp:tools mcp:define
//   client-opaque        opaque access tokens (checked by introspection)
//   toolwire             the resource server itself, for introspection
//   gateway              token exchange only
//
// Users: `alice` (the default) consents to every scope asked for; `bob`
// to mcp:tools only (mcp:define is rejected).
//
// Test-only routes, beside the provider's own:
//   POST /test/rotate    a new signing key, published first in the JWKS
//                        (the old one stays published)
//   POST /test/sign      {"header": {...}, "claims": {...}, "key": K} signs
//                        a token the provider would not issue: K is
//                        "current" (the provider's signing key), "rogue"
//                        (a key the JWKS does not publish) or "hs-public"
//                        (HS256 keyed with the current public key's PEM,
//                        the algorithm-confusion attack)
//   POST /test/account   {"account": "bob"}: who logs in from now on
//   POST /test/jwks      {"down": true}: /jwks answers 503 until
//                        {"down": false}
//   GET /test/introspections  how many introspection requests it has had
//   GET /test/exchanges  how many token exchanges it has answered
import http from 'node:http';
import * as jose from 'jose';
import Provider, { errors } from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

const resource = process.argv[2];
const ttl = Number(process.argv[3] || 300);
if (!resource || !(ttl > 0)) {
  console.error('usage: node provider.mjs RESOURCE [ACCESS_TOKEN_TTL_SECONDS]');
  process.exit(2);
}

const SCOPES = 'mcp:tools mcp:define';
// The resource scopes each user consents to (null: any).
const ACCOUNTS = { alice: null, bob: ['mcp:tools'] };
let account = 'alice';
let serial = 0;

async function newKey() {
  serial += 1;
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: `key-${serial}-${Date.now()}`, alg: 'RS256', use: 'sig' };
}

let keys = [await newKey()];
const rogue = await newKey();
rogue.kid = 'rogue';

const client = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope: SCOPES,
});

let provider;
let introspections = 0;
let exchanges = 0;
let jwksDown = false;

function build(issuer) {
  const p = new Provider(issuer, {
    clients: [
      client('client-a'),
      client('client-b'),
      client('client-opaque'),
      { ...client('toolwire'), grant_types: [] },
      { ...client('gateway'), grant_types: [TOKEN_EXCHANGE] },
    ],
    jwks: { keys },
    scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    cookies: { keys: ['toolwire-oidc-test'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, c) => ({
          scope: SCOPES,
          audience: indicator,
          accessTokenTTL: ttl,
          accessTokenFormat: c.clientId === 'client-opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    issueRefreshToken: async (ctx, c) => c.grantTypeAllowed('refresh_token'),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    ttl: { AccessToken: ttl },
  });
  p.on('server_error', (ctx, err) => console.error('provider error:', err));

  // RFC 8693: the subject token must be one of ours (checked against the
  // published keys and this issuer); the new token has its `sub`, the
  // audience asked for, and `act` naming the client that exchanged it.
  p.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const params = ctx.oidc.params;
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
      throw new errors.InvalidRequest('subject_token_type must be an access token');
    }
    const wanted = params.resource || params.audience;
    if (!wanted) throw new errors.InvalidTarget('no resource asked for');
    const published = jose.createLocalJWKSet({
      keys: keys.map(({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use })),
    });
    let subject;
    try {
      ({ payload: subject } = await jose.jwtVerify(params.subject_token, published, { issuer }));
    } catch {
      throw new errors.InvalidGrant('the subject token does not verify');
    }
    if (subject.sub === 'mallory') throw new errors.InvalidGrant('mallory may not act upstream');
    exchanges += 1;
    const now = Math.floor(Date.now() / 1000);
    const clientId = ctx.oidc.client.clientId;
    const token = await sign({
      claims: {
        iss: issuer, sub: subject.sub, aud: wanted, client_id: clientId,
        scope: params.scope || 'mcp:tools', iat: now, exp: now + ttl,
        jti: `exchanged-${exchanges}-${now}`, act: { sub: clientId },
      },
    });
    ctx.body = {
      access_token: token, issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer', expires_in: ttl,
    };
  }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);

  // The user: logs in as `account` and consents at once, to the scopes
  // that account may have.
  p.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/interaction/')) return next();
    const details = await p.interactionDetails(ctx.req, ctx.res);
    const { prompt, params, session } = details;
    let result;
    if (prompt.name === 'login') {
      result = { login: { accountId: account } };
    } else {
      const grant = details.grantId
        ? await p.Grant.find(details.grantId)
        : new p.Grant({ accountId: session.accountId, clientId: params.client_id });
      const missing = prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      const allowed = ACCOUNTS[session.accountId];
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
        const yes = scopes.filter((s) => !allowed || allowed.includes(s));
        const no = scopes.filter((s) => !yes.includes(s));
        if (yes.length) grant.addResourceScope(indicator, yes.join(' '));
        if (no.length) grant.rejectResourceScope(indicator, no.join(' '));
      }
      result = { consent: { grantId: await grant.save() } };
    }
    await p.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
  });
  return p;
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
}

async function sign({ header = {}, claims = {}, key = 'current' }) {
  if (key === 'hs-public') {
    const publicKey = await jose.importJWK(
      { kty: keys[0].kty, n: keys[0].n, e: keys[0].e }, 'RS256',
    );
    const pem = await jose.exportSPKI(publicKey);
    return new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: keys[0].kid, ...header })
      .sign(new TextEncoder().encode(pem));
  }
  const jwk = key === 'rogue' ? rogue : keys[0];
  const privateKey = await jose.importJWK(jwk, 'RS256');
  // jose refuses to sign a `crit` it is not told it understands.
  const crit = Object.fromEntries((header.crit || []).map((name) => [name, true]));
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: jwk.kid, ...header })
    .sign(privateKey, { crit });
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === 'POST' && req.url === '/test/rotate') {
      keys = [await newKey(), ...keys];
      provider = build(provider.issuer);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: keys[0].kid }));
      return;
    }
    if (req.method === 'POST' && req.url === '/test/account') {
      const wanted = (await readJson(req)).account;
      if (!(wanted in ACCOUNTS)) {
        res.writeHead(400);
        res.end(`unknown account ${wanted}`);
        return;
      }
      account = wanted;
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url === '/test/exchanges') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ count: exchanges }));
      return;
    }
    if (req.method === 'GET' && req.url === '/test/introspections') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ count: introspections }));
      return;
    }
    if (req.method === 'POST' && req.url === '/test/jwks') {
      jwksDown = Boolean((await readJson(req)).down);
      res.writeHead(204);
      res.end();
      return;
    }
    if (jwksDown && req.url.startsWith('/jwks')) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down for the test');
      return;
    }
    if (req.url.startsWith('/token/introspection')) introspections += 1;
    if (req.method === 'POST' && req.url === '/test/sign') {
      const token = await sign(await readJson(req));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(token);
      return;
    }
    provider.callback()(req, res);
  } catch (err) {
    console.error(err);
    res.writeHead(500);
    res.end(String(err));
  }
});

server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = build(issuer);
  console.log(`ready ${issuer}`);
});

// The test kills it; also stop when its stdin closes (the test died).
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
