// The authorization server of the OAuth tests (crates/toolwire-cli/tests/it/auth.rs):
// a real oidc-provider (pinned in package.json) on 127.0.0.1, issuing JWT
// access tokens (RS256, typ at+jwt) for the resource named with RFC 8707
// resource indicators through the client-credentials grant, and serving
// RFC 7662 introspection.
//
//   node provider.mjs RESOURCE
//
// prints `ready http://127.0.0.1:PORT` on stdout once it listens; the port
// is chosen by the system, and the issuer is that URL.
//
// Clients (client_secret_basic):
//   client-a, client-b   JWT access tokens; scopes mcp:tools mcp:define
//   client-opaque        opaque access tokens (checked by introspection)
//   toolwire             the resource server itself, for introspection
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
//   GET /test/introspections  how many introspection requests it has had
import http from 'node:http';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const resource = process.argv[2];
if (!resource) {
  console.error('usage: node provider.mjs RESOURCE');
  process.exit(2);
}

const SCOPES = 'mcp:tools mcp:define';
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

function build(issuer) {
  const p = new Provider(issuer, {
    clients: [
      client('client-a'),
      client('client-b'),
      client('client-opaque'),
      { ...client('toolwire'), grant_types: [] },
    ],
    jwks: { keys },
    scopes: SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, c) => ({
          scope: SCOPES,
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: c.clientId === 'client-opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  p.on('server_error', (ctx, err) => console.error('provider error:', err));
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
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: jwk.kid, ...header })
    .sign(privateKey);
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
    if (req.method === 'GET' && req.url === '/test/introspections') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ count: introspections }));
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
