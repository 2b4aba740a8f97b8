// protocol.md "Identities" through the SDK: an ID token signed by a test issuer (its JWKS served
// here over HTTP), a link of an ES256 identity, app-backend tokens, and their refusals.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { makeClient, stopClients, OwnServer } from './support.js';

after(stopClients);

const base64url = (value) => Buffer.from(value).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

function jwt(header, claims, signPart) {
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${signPart(Buffer.from(input)).toString('base64url')}`;
}

test('identity sign-in, link, unlink and app tokens', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keys = [
    { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'js-rsa', use: 'sig', alg: 'RS256' },
    { ...ec.publicKey.export({ format: 'jwk' }), kid: 'js-ec', use: 'sig', alg: 'ES256' },
  ];
  const jwks = createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ keys }));
  });
  await new Promise((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const issuer = 'https://js-idp.test';
  const secret = 'a shared secret of thirty-two bytes or more';
  const server = await OwnServer.start([
    '--oidc-issuer', `issuer=${issuer};audience=js-app;jwks=http://127.0.0.1:${jwks.address().port}/jwks.json`,
    '--app-token-secret', secret,
  ]);
  try {
    const claims = (sub, extra = {}) => ({ iss: issuer, sub, aud: 'js-app', exp: now() + 600, iat: now() - 5, ...extra });
    const rs256 = (sub, extra) => jwt({ alg: 'RS256', kid: 'js-rsa' }, claims(sub, extra), (input) => sign('sha256', input, rsa.privateKey));
    const es256 = (sub, extra) => jwt({ alg: 'ES256', kid: 'js-ec' }, claims(sub, extra),
      (input) => sign('sha256', input, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }));

    const client = makeClient({ url: server.url });
    await client.start();
    const session = await client.identitySignIn({ token: rs256('js-1', { nonce: 'nonce-1' }), nonce: 'nonce-1', username: 'jsuser' });
    assert.equal(session.user.username, 'jsuser');
    assert.equal(client.token, session.token);
    const linked = await client.identityLink({ token: es256('js-2') });
    assert.deepEqual(linked.identities.map((i) => i.subject), ['js-1', 'js-2']);
    assert.equal((await client.identities()).identities.length, 2);
    assert.deepEqual((await client.identityUnlink(issuer, 'js-1')).identities.map((i) => i.subject), ['js-2']);
    await assert.rejects(client.identityUnlink(issuer, 'js-2'), { code: 'last_sign_in_method' });

    const again = makeClient({ url: server.url });
    await again.start();
    await assert.rejects(again.identitySignIn({ token: rs256('js-1', { nonce: 'nonce-1' }) }), { code: 'nonce_reused' });
    await assert.rejects(again.identitySignIn({ token: rs256('js-3', { aud: 'other' }) }), { code: 'wrong_audience' });
    assert.equal((await again.identitySignIn({ token: es256('js-2') })).user.username, 'jsuser');

    const app = makeClient({ url: server.url });
    await app.start();
    const hs256 = (claimsValue, key = secret) => jwt({ alg: 'HS256' }, claimsValue, (input) => createHmac('sha256', key).update(input).digest());
    await assert.rejects(app.appAuth({ token: hs256({ sub: 'jsapp' }, 'another secret of thirty-two bytes!!') }), { code: 'invalid_identity_token' });
    assert.equal((await app.appAuth({ token: hs256({ sub: 'jsapp', exp: now() + 600 }) })).user.username, 'jsapp');
  } finally {
    await server.dispose();
    jwks.close();
  }
});
