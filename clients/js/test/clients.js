// What the SDK tests share in Node and in Chromium: clients against the server under test,
// event waiting, an AsyncStorage-like store. No Node module here (the browser runs it too).
import { HuddleClient } from '../huddle.js';

/** The server under test: HUDDLE_URL in Node; the page's own server in the browser. */
export const serverURL = globalThis.process?.env?.HUDDLE_URL
  ?? (globalThis.location ? `ws://${globalThis.location.host}` : undefined);
if (!serverURL) throw new Error('HUDDLE_URL must be set (the Swift test JavaScriptSDKTests sets it)');

let counter = 0;
/** A username unique to this run. */
export function uniqueName(prefix) {
  counter += 1;
  return `${prefix}${Math.floor(Math.random() * 1e6).toString(36)}${Date.now().toString(36).slice(-4)}${counter}`.slice(0, 32);
}

const tracked = new Set();
/** A client with fast heartbeats and reconnects (tests must not wait for production timings). */
export function makeClient(options = {}) {
  const client = new HuddleClient({
    url: serverURL,
    reconnect: { initialDelayMs: 20, maxDelayMs: 300 },
    heartbeat: { pingAfterMs: 2000, deadAfterMs: 15000 },
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

