// Test support for Node: everything in clients.js, plus the huddle binary the restart tests
// run themselves and a TCP proxy that can cut or silence connections.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, normalize } from 'node:path';

export * from './clients.js';

/** The outbox's promise: `publishes` (what the writer sent) is one write sent twice with one
 * key, and the channel holds it once, as `watcher` saw it live (`stored`) and in history. */
export async function assertSentTwiceStoredOnce(publishes, watcher, room, stored) {
  assert.equal(publishes.length, 2);
  assert.equal(publishes[0].client_id, publishes[1].client_id);
  const history = await watcher.history(room);
  assert.deepEqual(history.publications.map((p) => p.data.text), ['once']);
  assert.equal(stored.length, 1);
}

/** The huddle binary, for tests that kill and restart their own server. */
export const binary = process.env.HUDDLE_BINARY;
if (!binary) throw new Error('HUDDLE_BINARY must be set (the Swift tests set it)');

/** A TCP proxy in front of a server port. `cut()` destroys every connection (a dropped TCP
 * connection); `silenceReplies()` stops forwarding server→client bytes (replies lost on the way);
 * `freeze()` forwards nothing either way (a dead network path that never closes). With `files`,
 * it also answers `GET /js-tests/PATH` itself with clients/js/PATH, so a browser page can load
 * the SDK's test files from the server's own origin. */
export class Proxy {
  static async start(targetPort, { files } = {}) {
    const proxy = new Proxy(targetPort, files);
    await new Promise((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.port = proxy.server.address().port;
    return proxy;
  }

  constructor(targetPort, files) {
    this.targetPort = targetPort;
    this.pairs = new Set();
    this.accepted = 0;
    this.server = createServer((client) => {
      client.on('error', () => client.destroy());
      client.once('data', (first) => {
        const start = first.toString('latin1');
        if (files && start.startsWith('GET /js-tests/')) { serveFile(client, files, start.split(' ')[1].slice('/js-tests/'.length)); return; }
        this.accepted += 1;
        const upstream = connect(this.targetPort, '127.0.0.1');
        const pair = { client, upstream, mode: 'forward' };
        this.pairs.add(pair);
        upstream.write(first);
        client.on('data', (bytes) => { if (pair.mode !== 'frozen') upstream.write(bytes); });
        if (this.truncation && start.startsWith(`GET ${this.truncation.path} `)) pair.truncation = { ...this.truncation, seen: Buffer.alloc(0) };
        upstream.on('data', (bytes) => {
          if (pair.mode !== 'forward') return;
          if (pair.truncation) forwardTruncated(pair, bytes);
          else client.write(bytes);
        });
        const end = () => { client.destroy(); upstream.destroy(); this.pairs.delete(pair); };
        upstream.on('error', end); client.on('close', end); upstream.on('close', end);
      });
    });
  }

  get url() { return `ws://127.0.0.1:${this.port}`; }
  cut() { for (const pair of [...this.pairs]) { pair.client.destroy(); pair.upstream.destroy(); } this.pairs.clear(); }
  /** Applies to the connections open now; new ones forward normally. */
  silenceReplies() { for (const pair of this.pairs) pair.mode = 'silent'; }
  freeze() { for (const pair of this.pairs) pair.mode = 'frozen'; }
  /** HTTP requests for `path` made from now on get the response's head and `bodyBytes` of its
   * body, then the connection closes (a download that breaks off). */
  truncateResponses(path, bodyBytes) { this.truncation = { path, bodyBytes }; }
  retarget(port) { this.targetPort = port; }
  close() { this.cut(); this.server.close(); }
}

/** Forwards a response's head and `bodyBytes` of its body once that much has come, then closes. */
function forwardTruncated(pair, bytes) {
  const truncation = pair.truncation;
  truncation.seen = Buffer.concat([truncation.seen, bytes]);
  const head = truncation.seen.indexOf('\r\n\r\n');
  if (head < 0 || truncation.seen.length < head + 4 + truncation.bodyBytes) return;
  pair.mode = 'frozen';
  pair.client.end(truncation.seen.subarray(0, head + 4 + truncation.bodyBytes));
  pair.upstream.destroy();
}

const contentTypes = { js: 'text/javascript', html: 'text/html', json: 'application/json' };
function serveFile(socket, root, path) {
  const clean = normalize(decodeURIComponent(path.split('?')[0]));
  let status = '200 OK';
  let body;
  try {
    if (clean.startsWith('..') || isAbsolute(clean)) throw new Error('outside');
    body = readFileSync(join(root, clean));
  } catch {
    status = '404 Not Found';
    body = Buffer.from('not found');
  }
  const type = contentTypes[clean.split('.').pop()] ?? 'application/octet-stream';
  socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${status}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Length: ${body.length}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n`), body]));
}

/** A huddle server of the test's own, on a data directory it keeps across `kill9()`/`restart()`. */
export class OwnServer {
  /** `args`: more flags for `huddle serve`. */
  static async start(args = []) {
    const server = new OwnServer(mkdtempSync(join(tmpdir(), 'huddle-js-')), args);
    await server.launch();
    return server;
  }

  constructor(dataDir, args = []) { this.dataDir = dataDir; this.args = args; this.child = null; this.port = 0; }

  launch() {
    const child = spawn(binary, ['--host', '127.0.0.1', '--port', '0', '--threads', '2', '--log-level', 'info',
      '--kdf-iterations', '1000', '--fsync', 'always', '--data-dir', this.dataDir, ...this.args], { stdio: ['ignore', 'ignore', 'pipe'] });
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
