// Test support: the real `huddle` server (started by the Swift suite, or here for the restart
// tests), a TCP proxy that can cut or silence connections, and event waiting.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HuddleClient } from '../huddle.js';

/** The server the Swift test started (HUDDLE_URL), e.g. ws://127.0.0.1:PORT. */
export const serverURL = process.env.HUDDLE_URL;
/** The huddle binary, for tests that kill and restart their own server. */
export const binary = process.env.HUDDLE_BINARY;
if (!serverURL || !binary) throw new Error('HUDDLE_URL and HUDDLE_BINARY must be set (the Swift test JavaScriptSDKTests sets them)');

let counter = 0;
/** A username unique to this run. */
export function uniqueName(prefix) {
  counter += 1;
  return `${prefix}${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}${counter}`.slice(0, 32);
}

const tracked = new Set();
/** A client with fast heartbeats and reconnects (tests must not wait for production timings). */
export function makeClient(options = {}) {
  const client = new HuddleClient({
    url: serverURL,
    reconnect: { initialDelayMs: 20, maxDelayMs: 300 },
    heartbeat: { pingAfterMs: 2000, deadAfterMs: 6000 },
    requestTimeoutMs: 20000,
    ...options,
  });
  tracked.add(client);
  return client;
}

/** Stops every client made by `makeClient`. */
export function stopClients() {
  for (const client of tracked) client.stop();
  tracked.clear();
}

/** A started client signed up as a new user. */
export async function signedUp(prefix, options = {}) {
  const client = makeClient(options);
  await client.start();
  const username = uniqueName(prefix);
  await client.signup({ username, email: `${username}@example.com`, password: 'correct horse battery' });
  return client;
}

/** Makes two signed-in clients friends. */
export async function befriend(a, b) {
  await a.friendRequest(b.user.username, { message: 'hi' });
  await b.friendAccept(a.user.username);
}

/** Resolves with the first `name` event of `client` that satisfies `predicate`. */
export function nextEvent(client, name, predicate = () => true, timeoutMs = 30000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no ${name} event within ${timeoutMs} ms`)); }, timeoutMs);
    const off = client.on(name, (event) => {
      if (!predicate(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/** Collects every `name` event of `client` into an array. */
export function collect(client, name, predicate = () => true) {
  const events = [];
  client.on(name, (event) => { if (predicate(event)) events.push(event); });
  return events;
}

/** Waits until `condition()` holds, checking on every turn of the event loop's timers. */
export async function until(condition, what, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A localStorage-shaped store in memory, asynchronous like React Native's AsyncStorage. */
export class MemoryStorage {
  constructor() { this.items = new Map(); }
  async getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  async setItem(key, value) { this.items.set(key, String(value)); }
  async removeItem(key) { this.items.delete(key); }
}

/** A TCP proxy in front of a server port. `cut()` destroys every connection (a dropped TCP
 * connection); `silenceReplies()` stops forwarding server→client bytes (replies lost on the way);
 * `freeze()` forwards nothing either way (a dead network path that never closes). */
export class Proxy {
  static async start(targetPort) {
    const proxy = new Proxy(targetPort);
    await new Promise((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.port = proxy.server.address().port;
    return proxy;
  }

  constructor(targetPort) {
    this.targetPort = targetPort;
    this.pairs = new Set();
    this.mode = 'forward';
    this.accepted = 0;
    this.server = createServer((client) => {
      this.accepted += 1;
      const upstream = connect(this.targetPort, '127.0.0.1');
      const pair = { client, upstream, mode: this.mode === 'forward' ? 'forward' : this.mode };
      this.pairs.add(pair);
      client.on('data', (bytes) => { if (pair.mode !== 'frozen') upstream.write(bytes); });
      upstream.on('data', (bytes) => { if (pair.mode === 'forward') client.write(bytes); });
      const end = () => { client.destroy(); upstream.destroy(); this.pairs.delete(pair); };
      client.on('error', end); upstream.on('error', end); client.on('close', end); upstream.on('close', end);
    });
  }

  get url() { return `ws://127.0.0.1:${this.port}`; }
  cut() { for (const pair of [...this.pairs]) { pair.client.destroy(); pair.upstream.destroy(); } this.pairs.clear(); }
  /** Applies to the connections open now; new ones forward normally. */
  silenceReplies() { for (const pair of this.pairs) pair.mode = 'silent'; }
  freeze() { for (const pair of this.pairs) pair.mode = 'frozen'; }
  retarget(port) { this.targetPort = port; }
  close() { this.cut(); this.server.close(); }
}

/** A huddle server of the test's own, on a data directory it keeps across `kill9()`/`restart()`. */
export class OwnServer {
  static async start() {
    const server = new OwnServer(mkdtempSync(join(tmpdir(), 'huddle-js-')));
    await server.launch();
    return server;
  }

  constructor(dataDir) { this.dataDir = dataDir; this.child = null; this.port = 0; }

  launch() {
    const child = spawn(binary, ['--host', '127.0.0.1', '--port', '0', '--threads', '2', '--log-level', 'info',
      '--kdf-iterations', '1000', '--fsync', 'always', '--data-dir', this.dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    let log = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`huddle did not listen within 30 s: ${log}`)), 30000);
      child.stderr.on('data', (bytes) => {
        log += bytes.toString();
        const match = /url=ws:\/\/127\.0\.0\.1:(\d+)/.exec(log);
        if (match && !this.port) { this.port = Number(match[1]); clearTimeout(timer); resolve(); }
      });
      child.on('exit', (code) => { clearTimeout(timer); if (!this.port) reject(new Error(`huddle exited ${code}: ${log}`)); });
    });
  }

  get url() { return `ws://127.0.0.1:${this.port}`; }

  /** SIGKILL, and waits for the exit. */
  async kill9() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL'); });
  }

  async restart() { this.port = 0; await this.launch(); }

  async dispose() { await this.kill9(); rmSync(this.dataDir, { recursive: true, force: true }); }
}
