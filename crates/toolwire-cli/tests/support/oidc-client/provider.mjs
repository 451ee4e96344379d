// The authorization server of the OAuth client tests (tests/it/oauth.rs):
// oidc-provider (pinned in package.json) on 127.0.0.1, with dynamic
// registration, resource indicators and refresh tokens, whose interactions
// approve themselves (login as `test-user`, consent to what was asked), so
// a browser that only follows redirects completes the authorization code
// flow. Beside it, on a second port, the discovery half of a protected MCP
// server: POST /mcp answers 401 with a Bearer challenge, and its protected
// resource metadata names this authorization server.
//
// Usage: node provider.mjs ACCESS_TOKEN_TTL_SECONDS
// Prints one line, `ready ISSUER MCP_URL`, once both listen.
import http from 'node:http';
import Provider from 'oidc-provider';

const ttl = Number(process.argv[2] || 3600);
const SCOPES = ['mcp:read', 'mcp:write'];

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

const asServer = http.createServer();
const rsServer = http.createServer();
const asPort = await listen(asServer);
const rsPort = await listen(rsServer);
const issuer = `http://127.0.0.1:${asPort}`;
const mcp = `http://127.0.0.1:${rsPort}/mcp`;
const prm = `http://127.0.0.1:${rsPort}/.well-known/oauth-protected-resource/mcp`;

const provider = new Provider(issuer, {
  clients: [],
  clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
  cookies: { keys: ['toolwire-oidc-client-test'] },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => mcp,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (resource !== mcp) throw new Error(`unknown resource ${resource}`);
        return { scope: SCOPES.join(' '), audience: mcp, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
      },
    },
  },
  scopes: ['openid', 'offline_access', ...SCOPES],
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  ttl: { AccessToken: ttl },
});
provider.proxy = false;

// The user: approves every interaction at once.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: 'test-user' } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
});

asServer.on('request', provider.callback());

rsServer.on('request', (req, res) => {
  if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ resource: mcp, authorization_servers: [issuer], scopes_supported: SCOPES }));
    return;
  }
  if (req.method === 'POST' && req.url === '/mcp') {
    res.writeHead(401, {
      'www-authenticate': `Bearer resource_metadata="${prm}", scope="mcp:read"`,
      'content-type': 'application/json',
    });
    res.end('{"error":"invalid_token"}');
    return;
  }
  res.writeHead(404);
  res.end();
});

console.log(`ready ${issuer} ${mcp}`);
