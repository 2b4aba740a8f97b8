// The SDK in headless Chromium, loaded from the server (/sdk/huddle.js), against the real
// server: the browser's own WebSocket (token in the subprotocol: it cannot set headers),
// exact resume after a dropped TCP connection and after kill -9 + restart, and the outbox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Chromium } from './chromium.js';
import { Proxy, OwnServer, uniqueName, until, assertSentTwiceStoredOnce } from '../support.js';
import { HuddleClient } from '../../huddle.js';

let browser;
let server;
let proxy;
let page;

before(async () => {
  server = await OwnServer.start();
  proxy = await Proxy.start(server.port);
  browser = await Chromium.launch();
  page = await browser.newPage();
  // A page of the server's origin without the app's CSP, where the tests import the SDK.
  await page.goto(`http://127.0.0.1:${proxy.port}/healthz`);
  await page.eval(`(async () => {
    const sdk = await import('/sdk/huddle.js');
    window.sdk = sdk;
    window.sent = [];
    window.RecordingWebSocket = class extends WebSocket { send(text) { sent.push(JSON.parse(text)); super.send(text); } };
    window.make = async (prefix, url) => {
      const client = new sdk.HuddleClient({ url, reconnect: { initialDelayMs: 20, maxDelayMs: 300 }, heartbeat: { pingAfterMs: 2000, deadAfterMs: 15000 } });
      await client.start();
      const username = prefix + Math.random().toString(36).slice(2, 10);
      await client.signup({ username, email: username + '@example.com', password: 'correct horse battery' });
      client.seen = [];
      client.on('publication', (p) => client.seen.push(p));
      client.recovered = [];
      client.on('recovered', (r) => client.recovered.push(r));
      return client;
    };
    return true;
  })()`);
});

after(async () => {
  await page?.eval('window.reader?.stop(); window.writer?.stop(); true').catch(() => {});
  await browser?.close();
  proxy?.close();
  await server?.dispose();
});

test('in Chromium: the token travels in the subprotocol and the session resumes', async () => {
  const username = await page.eval(`(async () => {
    window.reader = await make('br', 'ws://127.0.0.1:${proxy.port}');
    window.writer = await make('bw', 'ws://127.0.0.1:${server.port}');
    const again = new sdk.HuddleClient({ url: 'ws://127.0.0.1:${proxy.port}', token: reader.token });
    const session = new Promise((resolve) => again.on('session', resolve));
    await again.start();
    const event = await session;
    const who = await again.whoami();
    again.stop();
    return event.user.username === reader.user.username && who.user.username;
  })()`);
  assert.ok(username);
  assert.equal(page.errors.length, 0, page.errors.join('\n'));
});

test('in Chromium: a dropped TCP connection and a kill -9 + restart lose and double nothing', async () => {
  const room = `room:${uniqueName('bk')}`;
  await page.eval(`window.room = ${JSON.stringify(room)}; reader.subscribe(room).then(() => true)`);
  await page.eval(`(async () => { for (let n = 1; n <= 10; n++) await writer.publish(room, { n }); return true; })()`);
  await page.waitFor(`reader.seen.filter((p) => p.channel === room).length === 10`, 'the first 10');
  proxy.cut();
  await page.eval(`(async () => { for (let n = 11; n <= 20; n++) await writer.publish(room, { n }); return true; })()`);
  await page.waitFor(`reader.seen.filter((p) => p.channel === room).length >= 20`, '20 after the drop');

  // kill -9: both clients reconnect (the writer directly, so it needs the same port: it gets the
  // new one through the proxy instead) and the writes made meanwhile wait in the outbox.
  await page.eval(`writer.stop(); window.writer = new sdk.HuddleClient({ url: 'ws://127.0.0.1:${proxy.port}', token: writer.token, WebSocket: RecordingWebSocket, reconnect: { initialDelayMs: 20, maxDelayMs: 300 } }); writer.start().then(() => true)`);
  await page.waitFor(`writer.state === 'ready'`, 'the writer through the proxy');
  await server.kill9();
  proxy.cut();
  await page.waitFor(`writer.state !== 'ready' && reader.state !== 'ready'`, 'both to notice');
  await page.eval(`window.pending = Array.from({ length: 10 }, (_, i) => writer.publish(room, { n: 21 + i })); true`);
  await server.restart();
  proxy.retarget(server.port);
  const offsets = await page.eval(`Promise.all(pending).then((results) => results.map((r) => r.offset))`);
  assert.deepEqual(offsets, Array.from({ length: 10 }, (_, i) => 21 + i));
  await page.waitFor(`reader.seen.filter((p) => p.channel === room).length >= 30`, 'all 30');
  const seen = await page.eval(`reader.seen.filter((p) => p.channel === room).map((p) => [p.offset, p.data.n])`);
  assert.deepEqual(seen, Array.from({ length: 30 }, (_, i) => [i + 1, i + 1]));
  assert.deepEqual(await page.eval(`reader.recovered.map((r) => r.recovered)`), [true, true]);
});

test('in Chromium: an unanswered write is sent again once and stored once', async () => {
  const room = `room:${uniqueName('bo')}`;
  // A watcher straight to the server (not through the proxy) sees when the write is stored.
  const watcher = new HuddleClient({ url: server.url });
  try {
    await watcher.start();
    await watcher.signup({ username: uniqueName('bv'), email: `${uniqueName('bv')}@example.com`, password: 'correct horse battery' });
    const stored = [];
    watcher.on('publication', (p) => { if (p.channel === room) stored.push(p); });
    await watcher.subscribe(room);
    await page.waitFor(`writer.state === 'ready'`, 'the writer');
    proxy.silenceReplies();
    await page.eval(`window.reply = writer.publish(${JSON.stringify(room)}, { text: 'once' }); true`);
    await until(() => stored.length === 1, 'the server to store it');
    proxy.cut();
    const result = await page.eval(`reply`);
    assert.equal(result.offset, 1);
    assert.equal(result.duplicate, true);
    const publishes = await page.eval(`sent.filter((m) => m.op === 'publish' && m.data.text === 'once')`);
    await assertSentTwiceStoredOnce(publishes, watcher, room, stored);
  } finally {
    watcher.stop();
  }
});
