// A real OpenID Connect provider for the tests: panva's oidc-provider (ESM-only, so it
// runs in a process of its own, started by test/support/oidc-provider.ts). It listens on
// a random loopback port, knows one confidential client (PKCE required) and logs in,
// with no page, the account the test last set with `PUT /test/account`
// {sub, email, email_verified}. Its first line on stdout is {"issuer": "http://127.0.0.1:…"}.
//
// Environment: OIDC_REDIRECT_URI, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import process from 'node:process';
import Provider from 'oidc-provider';

const { OIDC_REDIRECT_URI, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET } = process.env;
const accounts = new Map();
let current = null;

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      redirect_uris: [OIDC_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, sub) => {
    const account = accounts.get(sub);
    return account && { accountId: sub, claims: () => ({ ...account }) };
  },
});
const handle = provider.callback();

/** Logs in the current account and grants what the client asks, without a page. */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: current.sub } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) {
      grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    }
    if (missing.missingOIDCClaims) {
      grant.addOIDCClaims(missing.missingOIDCClaims);
    }
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

async function setAccount(req, res) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
  }
  current = JSON.parse(body);
  accounts.set(current.sub, current);
  res.writeHead(204).end();
}

server.on('request', (req, res) => {
  const work =
    req.method === 'PUT' && req.url === '/test/account'
      ? setAccount(req, res)
      : req.url.startsWith('/interaction/')
        ? interaction(req, res)
        : Promise.resolve(handle(req, res));
  work.catch((error) => {
    process.stderr.write(`oidc-provider test server: ${error.stack}\n`);
    if (!res.headersSent) {
      res.writeHead(500).end(String(error.message));
    }
  });
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
