// What survives a reconnect: exact resume after a dropped TCP connection and after kill -9 and
// a restart, the outbox, dead-connection detection, saved positions, recovered: false.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { HuddleClient, backoffDelay } from '../huddle.js';
import { makeClient, signedUp, nextEvent, collect, until, uniqueName, stopClients, MemoryStorage, Proxy, OwnServer, serverURL, assertSentTwiceStoredOnce } from './support.js';

after(stopClients);

const serverPort = Number(new URL(serverURL).port);
const offsets = (publications) => publications.map((p) => p.offset);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('a dropped TCP connection: the subscriber resumes exactly, no gap and no duplicate', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    const writer = await signedUp('tw');
    const reader = await signedUp('tr', { url: proxy.url });
    const room = `room:${uniqueName('drop')}`;
    const seen = collect(reader, 'publication', (p) => p.channel === room);
    const recovered = collect(reader, 'recovered');
    await reader.subscribe(room);
    for (let n = 1; n <= 20; n++) await writer.publish(room, { n });
    await until(() => seen.length === 20, 'the first 20');
    const resumed = nextEvent(reader, 'connected', (e) => e.resumed);
    proxy.cut();
    for (let n = 21; n <= 60; n++) await writer.publish(room, { n });
    assert.equal((await resumed).user.username, reader.user.username);
    await until(() => seen.length >= 60, 'all 60');
    assert.deepEqual(offsets(seen), range(1, 60));
    assert.deepEqual(seen.map((p) => p.data.n), range(1, 60));
    assert.deepEqual(recovered, [{ channel: room, recovered: true }]);
    assert.ok(proxy.accepted >= 2);
  } finally {
    proxy.close();
  }
});

test('kill -9 and a restart: nothing lost, nothing doubled, writes made while down are sent after', async () => {
  const server = await OwnServer.start();
  const proxy = await Proxy.start(server.port);
  try {
    const writer = await signedUp('kw', { url: proxy.url });
    const reader = await signedUp('kr', { url: proxy.url });
    const room = `room:${uniqueName('kill')}`;
    const seen = collect(reader, 'publication', (p) => p.channel === room);
    await reader.subscribe(room);
    for (let n = 1; n <= 10; n++) await writer.publish(room, { n });
    await until(() => seen.length === 10, 'the first 10');
    await server.kill9();
    proxy.cut();
    await until(() => writer.state !== 'ready', 'the writer to notice');
    // Written while the server is down: they wait in the outbox.
    const pending = range(11, 20).map((n) => writer.publish(room, { n }));
    await server.restart();
    proxy.retarget(server.port);
    const results = await Promise.all(pending);
    assert.deepEqual(results.map((r) => r.offset), range(11, 20));
    await until(() => seen.length >= 20, 'all 20');
    assert.deepEqual(offsets(seen), range(1, 20));
    assert.deepEqual(seen.map((p) => p.data.n), range(1, 20));
    const history = await reader.history(room, { limit: 100 });
    assert.deepEqual(offsets(history.publications).reverse(), range(1, 20));
  } finally {
    proxy.close();
    stopClients();
    await server.dispose();
  }
});

/** A WebSocket that records what the client sends. */
function recordingWebSocket(sent) {
  return class extends WebSocket {
    send(text) { sent.push(JSON.parse(text)); super.send(text); }
  };
}

test('an unanswered write is sent again once after the reconnect and stored once', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    const sent = [];
    const writer = await signedUp('ow', { url: proxy.url, WebSocket: recordingWebSocket(sent) });
    const watcher = await signedUp('oo');
    const room = `room:${uniqueName('outbox')}`;
    const stored = collect(watcher, 'publication', (p) => p.channel === room);
    await watcher.subscribe(room);
    proxy.silenceReplies();
    const reply = writer.publish(room, { text: 'once' });
    await until(() => stored.length === 1, 'the server to store it');
    proxy.cut();
    const result = await reply;
    assert.equal(result.offset, 1);
    assert.equal(result.duplicate, true);
    const publishes = sent.filter((m) => m.op === 'publish');
    await assertSentTwiceStoredOnce(publishes, watcher, room, stored);
  } finally {
    proxy.close();
  }
});

test('a write without a key fails with connection_lost instead of being repeated', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    const writer = await signedUp('nk', { url: proxy.url });
    const room = `room:${uniqueName('nokey')}`;
    await writer.subscribe(room);
    proxy.silenceReplies();
    const reply = writer.typing(`chat:${'a'.repeat(3)}~${'b'.repeat(3)}`);
    const published = writer.publish(room, { text: 'x' }, { clientId: null });
    proxy.cut();
    await assert.rejects(reply, { code: 'connection_lost' });
    await assert.rejects(published, { code: 'connection_lost' });
  } finally {
    proxy.close();
  }
});

test('while no server answers, a read times out but a keyed write waits in the outbox until one does', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    // The short request timeout only from here: the sign-up before it may take longer than
    // 300 ms to connect and be answered on a loaded machine.
    const client = await signedUp('ob', { url: proxy.url });
    client.requestTimeoutMs = 300;
    const room = `room:${uniqueName('wait')}`;
    proxy.retarget(1); // nothing listens there: every attempt fails
    proxy.cut();
    await until(() => client.state !== 'ready', 'the drop');
    let settled = false;
    const write = client.publish(room, { text: 'kept' }).finally(() => { settled = true; });
    await assert.rejects(client.friends(), { code: 'timeout' });
    assert.equal(settled, false);
    proxy.retarget(serverPort);
    const result = await write;
    assert.equal(result.offset, 1);
    assert.deepEqual((await client.history(room)).publications.map((p) => p.data.text), ['kept']);
  } finally {
    proxy.close();
  }
});

test('a connection that goes silent is found dead by the heartbeat and replaced', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    const client = await signedUp('hb', { url: proxy.url, heartbeat: { pingAfterMs: 200, deadAfterMs: 800 } });
    const reconnecting = nextEvent(client, 'reconnecting');
    const back = nextEvent(client, 'connected', (e) => e.resumed);
    proxy.freeze();
    assert.match((await reconnecting).reason, /no frame from the server/);
    await back;
    assert.equal(typeof (await client.ping()).time, 'number');
  } finally {
    proxy.close();
  }
});

test('the storage hook keeps the token and positions: a new client resumes where the old one stopped', async () => {
  const storage = new MemoryStorage();
  const writer = await signedUp('sw');
  const first = await signedUp('ss', { storage });
  const room = `room:${uniqueName('store')}`;
  const firstSeen = collect(first, 'publication', (p) => p.channel === room);
  await first.subscribe(room);
  for (let n = 1; n <= 3; n++) await writer.publish(room, { n });
  await until(() => firstSeen.length === 3, 'three');
  first.stop();
  for (let n = 4; n <= 5; n++) await writer.publish(room, { n });

  const second = makeClient({ storage });
  const seen = collect(second, 'publication', (p) => p.channel === room);
  const recovered = collect(second, 'recovered');
  await second.start();
  const connected = await nextEvent(second, 'connected');
  assert.equal(connected.user.username, first.user.username);
  const result = await second.subscribe(room);
  assert.equal(result.recovered, true);
  assert.deepEqual(offsets(seen), [4, 5]);
  assert.deepEqual(recovered, [{ channel: room, recovered: true }]);
});

test('a position the server cannot resume from is reported as recovered: false, and delivery continues', async () => {
  const writer = await signedUp('rw');
  const reader = await signedUp('rr');
  const room = `room:${uniqueName('lost')}`;
  await writer.publish(room, { n: 1 });
  const recovered = nextEvent(reader, 'recovered');
  const seen = collect(reader, 'publication', (p) => p.channel === room);
  await reader.subscribe(room, { since: { epoch: 'another-epoch', offset: 7 } });
  assert.deepEqual(await recovered, { channel: room, recovered: false });
  await writer.publish(room, { n: 2 });
  await until(() => seen.length === 1, 'the live one');
  assert.equal(seen[0].offset, 2);
});

test('an export archive that breaks off is a failed download (download_incomplete), never a short archive', async () => {
  const proxy = await Proxy.start(serverPort);
  try {
    const client = await signedUp('cut', { url: proxy.url });
    proxy.truncateResponses('/api/v1/export', 700);
    const progress = [];
    const error = await client.exportArchive({ onProgress: (p) => progress.push(p) }).then(() => null, (e) => e);
    assert.equal(error?.code, 'download_incomplete', `failed: ${error}`);
    assert.equal(error.details.received, 700);
    assert.ok(error.details.total > 700, `of ${error.details.total}`);
    assert.match(error.message, /^download_incomplete: the archive stopped after 700 of \d+ bytes/);
    assert.equal(progress.at(-1).received, 700);
  } finally {
    proxy.close();
  }
});

test('backoff: exponential ceilings with full jitter', () => {
  const policy = { initialDelayMs: 100, maxDelayMs: 1000 };
  assert.deepEqual([1, 2, 3, 4, 5, 40].map((a) => backoffDelay(a, policy, () => 1)), [100, 200, 400, 800, 1000, 1000]);
  assert.deepEqual([1, 4].map((a) => backoffDelay(a, policy, () => 0)), [0, 0]);
  assert.equal(backoffDelay(3, policy, () => 0.5), 200);
});

test('chat channel names are canonical', () => {
  assert.equal(HuddleClient.chatChannel('Bob', 'alice'), 'chat:alice~bob');
});
