// Huddle JavaScript SDK: one ES module, no dependencies, no build step.
// Runs in browsers, React Native and Node >= 20 (`--experimental-websocket`, or pass any
// WHATWG WebSocket as `options.WebSocket`). Types: huddle.d.ts. Wire contract: protocol.md.
//
// Guarantees (the same as the Swift HuddleClient): every publication of a subscribed channel
// reaches the application once and in offset order across reconnects and server restarts;
// when the server cannot replay what was missed the app is told (`recovered: false`); writes
// whose reply was lost are sent again with the same idempotency key, so they happen once.

/** The field that names a write, per op: a write in this table gets a generated key and, when
 * its connection drops before the reply, is sent again with the same key after reconnecting
 * (protocol.md "Retries"). To key another op, add it here. */
export const IDEMPOTENCY_KEYS = Object.freeze({
  publish: 'client_id',
  friend_request: 'client_id', friend_accept: 'client_id', friend_decline: 'client_id',
  friend_cancel: 'client_id', friend_remove: 'client_id', mark_read: 'client_id',
  post: 'client_id', like: 'client_id', comment: 'client_id', post_delete: 'client_id',
  activity_on: 'client_id', activity_off: 'client_id', place_set: 'client_id', place_remove: 'client_id',
  memory_create: 'client_id', memory_update: 'client_id', memory_delete: 'client_id',
  point_add: 'client_id', point_update: 'client_id', point_delete: 'client_id',
  block: 'client_id', unblock: 'client_id',
});

/** Ops that change nothing, or whose repetition changes nothing (a location report not newer
 * than the last is ignored): sent again after a reconnect as they are. */
export const SAFE_TO_REPEAT = Object.freeze(new Set([
  'ping', 'whoami', 'history', 'presence', 'user_search', 'friend_requests', 'friends', 'unread',
  'feed', 'comments', 'activities', 'matches', 'places', 'where', 'memories', 'memory',
  'location_fix', 'region', 'blocks',
  // Profiles and sessions: setting the same profile twice is the same as once.
  'profile', 'profile_set', 'sessions', 'identities', 'account_export',
]));

/** A refused request (the reply's `error`), or the client's own failure (`connection_lost`,
 * `timeout`, `closed`, `overloaded`, `download_incomplete`). */
export class HuddleError extends Error {
  /** @param {string} code @param {string} message @param {Record<string, unknown>} [details] */
  constructor(code, message, details = {}) {
    super(`${code}: ${message}`);
    this.name = 'HuddleError';
    this.code = code;
    this.details = details;
    /** @type {number | undefined} */
    this.retryAfterMs = typeof details.retry_after_ms === 'number' ? details.retry_after_ms : undefined;
  }
}

const FEED_EVENTS = new Set(['post', 'like', 'comment', 'post_deleted', 'comment_removed']);

/** Whether position `a` is past `b` in the same epoch (or `b` is nothing yet). */
function isLater(a, b) {
  return !b || (a.epoch === b.epoch && a.offset > b.offset);
}

/** What has been delivered of each channel, so each publication reaches the app once and in
 * order: the next offset is delivered, an older one is a duplicate, a later one a gap (the
 * channel is resubscribed from its last position). No I/O. */
export class SubscriptionLedger {
  constructor() { /** @type {Map<string, {position: {epoch: string, offset: number} | null, resyncing: boolean}>} */ this.entries = new Map(); }
  track(channel, since) {
    const entry = this.entries.get(channel);
    if (!entry) { this.entries.set(channel, { position: since ?? null, resyncing: false }); return; }
    if (since && isLater(since, entry.position)) entry.position = since;
  }
  untrack(channel) { this.entries.delete(channel); }
  position(channel) { return this.entries.get(channel)?.position ?? null; }
  /** @returns {'deliver' | 'duplicate' | 'gap' | 'untracked'} */
  offer(channel, epoch, offset, replayed) {
    const entry = this.entries.get(channel);
    if (!entry) return 'untracked';
    if (entry.resyncing && !replayed) return 'duplicate';
    const p = entry.position;
    let verdict;
    if (!p) verdict = 'deliver';
    else if (p.epoch === epoch) verdict = offset <= p.offset ? 'duplicate' : offset === p.offset + 1 ? 'deliver' : 'gap';
    else if (p.epoch === '' && p.offset === 0) verdict = offset === 1 ? 'deliver' : 'gap';
    else verdict = 'gap';
    if (verdict === 'deliver') entry.position = { epoch, offset };
    return verdict;
  }
  subscribed(channel, epoch, offset) {
    const entry = this.entries.get(channel);
    if (!entry) return false;
    const latest = { epoch, offset };
    if (isLater(latest, entry.position) || entry.position?.epoch !== epoch) entry.position = latest;
    entry.resyncing = false;
    return true;
  }
  beginResync(channel) { const e = this.entries.get(channel); if (e) e.resyncing = true; }
  connectionLost() { for (const e of this.entries.values()) e.resyncing = false; }
  channels() { return [...this.entries.keys()].sort(); }
  positions() {
    const out = {};
    for (const [channel, e] of this.entries) if (e.position) out[channel] = e.position;
    return out;
  }
}

/** The delay before reconnect `attempt` (1 for the first retry): exponential backoff with full
 * jitter, uniform in [0, min(max, initial * 2^(attempt-1))]. */
export function backoffDelay(attempt, { initialDelayMs = 250, maxDelayMs = 30000 } = {}, random = Math.random) {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return Math.round(ceiling * random());
}

let keyCounter = 0;
/** A fresh idempotency key: random enough to be unique per user and op. */
export function makeClientId() {
  const bytes = new Uint8Array(12);
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  keyCounter = (keyCounter + 1) % 1e9;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') + '-' + keyCounter.toString(36);
}

/** A client that stays connected: it signs in with its token on every connection, resumes
 * every subscription exactly, resends unanswered writes with their keys, and notices a dead
 * connection by its silence. See huddle.d.ts for the typed surface. */
export class HuddleClient {
  /** @param {import('./huddle').HuddleClientOptions} options */
  constructor(options) {
    const urls = options.urls ?? (options.url ? [options.url] : []);
    if (urls.length === 0) throw new TypeError('HuddleClient needs url or urls');
    this.urls = urls.map((u) => u.replace(/\/+$/, '').replace(/\/v1$/, '') + '/v1');
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    if (typeof this.WebSocket !== 'function') throw new TypeError('no WebSocket: pass options.WebSocket (Node: --experimental-websocket)');
    this.storage = options.storage ?? null;
    this.storageKey = options.storageKey ?? 'huddle.';
    this.reconnect = { initialDelayMs: 250, maxDelayMs: 30000, maxAttempts: Infinity, ...options.reconnect };
    this.heartbeat = { pingAfterMs: 20000, deadAfterMs: 35000, ...options.heartbeat };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 15000;
    this.maxQueued = options.maxQueuedRequests ?? 1000;
    this.random = options.random ?? Math.random;
    /** @type {string | null} */ this.token = options.token ?? null;
    /** @type {{username: string, email: string} | null} */ this.user = null;
    /** 'idle' | 'connecting' | 'signing_in' | 'ready' | 'waiting' | 'stopped' */
    this.state = 'idle';
    this.ledger = new SubscriptionLedger();
    this.listeners = new Map();
    this.queued = []; // requests waiting for a ready connection, in call order
    this.inFlight = new Map(); // id -> request sent on the current connection
    this.nextId = 0;
    this.urlIndex = 0;
    this.failedAttempts = 0;
    this.lastReadyUser = null;
    this.storedPositions = {};
    this.ws = null;
    this.timers = { retry: null, beat: null, save: null };
  }

  // ---- events ----

  /** Listens to `name` (a server event or connected/reconnecting/recovered/stopped/state/...);
   * `'*'` gets every event as (name, event). Returns a function that stops listening. */
  on(name, handler) {
    if (!this.listeners.has(name)) this.listeners.set(name, new Set());
    this.listeners.get(name).add(handler);
    return () => this.listeners.get(name)?.delete(handler);
  }

  emit(name, event) {
    for (const handler of this.listeners.get(name) ?? []) this.safely(() => handler(event));
    for (const handler of this.listeners.get('*') ?? []) this.safely(() => handler(name, event));
  }

  safely(fn) {
    try { fn(); } catch (error) { queueMicrotask(() => { throw error; }); }
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', { state });
  }

  // ---- lifecycle ----

  /** Connects and keeps reconnecting until `stop()`. Loads the token and the saved channel
   * positions from `storage` first. */
  async start() {
    if (this.state !== 'idle' && this.state !== 'stopped') return;
    this.setState('connecting');
    if (this.storage) {
      const token = await this.storage.getItem(this.storageKey + 'token');
      if (token && !this.token) this.token = token;
      try { this.storedPositions = JSON.parse((await this.storage.getItem(this.storageKey + 'positions')) ?? '{}') ?? {}; } catch { this.storedPositions = {}; }
    }
    if (this.state !== 'connecting') return; // stopped meanwhile
    this.failedAttempts = 0;
    this.open();
  }

  /** Closes the connection and stops reconnecting; waiting requests fail with `closed`. */
  stop() {
    if (this.state === 'stopped') return;
    this.finish({ reason: 'requested' });
  }

  finish(reason) {
    clearTimeout(this.timers.retry);
    this.drop();
    this.setState('stopped');
    for (const request of [...this.queued, ...this.inFlight.values()]) request.reject(new HuddleError('closed', 'the client stopped'));
    this.queued = [];
    this.inFlight.clear();
    this.savePositions(true);
    this.emit('stopped', reason);
  }

  open() {
    clearTimeout(this.timers.retry);
    const url = this.urls[this.urlIndex % this.urls.length];
    const protocols = ['huddle.v1'];
    if (this.token) protocols.push('huddle.auth.' + this.token);
    this.setState('connecting');
    let ws;
    try { ws = new this.WebSocket(url, protocols); } catch (error) { this.lost(`cannot open ${url}: ${error.message}`); return; }
    this.ws = ws;
    this.lastHeard = Date.now();
    this.pingOutstanding = false;
    this.refusal = null;
    ws.onopen = () => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      this.startBeat();
      if (this.token) this.setState('signing_in'); // waits for the `session` event
      else this.ready(null);
    };
    ws.onmessage = (message) => { if (ws === this.ws) this.receive(message.data); };
    ws.onclose = (close) => { if (ws === this.ws) this.closed(close.code, close.reason); };
    // Some WebSockets (Node 20's) report a failed connection with an error and no close.
    ws.onerror = () => {
      if (ws !== this.ws) return;
      if (this.state === 'connecting') { this.lost(`cannot connect to ${url}`); return; }
      setTimeout(() => { if (ws === this.ws) this.lost('socket error'); }, 1000);
    };
  }

  /** Forgets the socket without waiting for its close (a dead TCP connection may never close). */
  drop() {
    clearInterval(this.timers.beat);
    const ws = this.ws;
    this.ws = null;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
    try { ws.close(1000); } catch { /* already closing */ }
  }

  closed(code, reason) {
    if (code === 4001 && !this.signingOut) {
      const refusal = this.refusal ?? { code: 'session_ended', message: reason || 'the server ended the session' };
      this.forgetSession();
      this.finish({ reason: 'authentication_failed', ...refusal });
      return;
    }
    this.lost(`closed ${code}${reason ? ' ' + reason : ''}`);
  }

  /** The connection is gone: requeue what may be sent again, fail the rest, wait, retry. */
  lost(reason) {
    const wasReady = this.state === 'ready';
    this.drop();
    this.ledger.connectionLost();
    const requeue = [];
    for (const request of this.inFlight.values()) {
      if (request.resend) requeue.push(request);
      else request.reject(new HuddleError('connection_lost', `the connection dropped before the reply (${reason})`));
    }
    this.inFlight.clear();
    this.queued = [...requeue.filter((r) => !r.internal), ...this.queued];
    if (this.signingOut) { this.signingOut = false; this.forgetSession(); }
    if (!wasReady) this.failedAttempts += 1; else this.failedAttempts = 1;
    if (!wasReady) this.urlIndex += 1; // try the next server
    if (this.failedAttempts > this.reconnect.maxAttempts) {
      this.finish({ reason: 'gave_up', attempts: this.failedAttempts - 1, lastReason: reason });
      return;
    }
    const delayMs = backoffDelay(this.failedAttempts, this.reconnect, this.random);
    this.setState('waiting');
    this.emit('reconnecting', { attempt: this.failedAttempts, delayMs, reason });
    this.timers.retry = setTimeout(() => this.open(), delayMs);
  }

  /** Drops the current connection at once and reconnects (what the heartbeat does to a silent one). */
  reconnectNow(reason = 'requested') {
    if (this.ws) this.lost(reason);
  }

  ready(user) {
    const resumed = user !== null && this.lastReadyUser === user.username;
    this.user = user;
    if (user) this.lastReadyUser = user.username;
    this.failedAttempts = 0;
    this.setState('ready');
    this.emit('connected', { user, resumed });
    // A subscribe the app made while disconnected goes out with the queue; every other
    // channel is resumed from its last delivered position.
    const pending = new Set(this.queued.filter((r) => r.subscribe).map((r) => r.args.channel));
    for (const channel of this.ledger.channels()) if (!pending.has(channel)) this.sendSubscribe(channel, true);
    const queued = this.queued;
    this.queued = [];
    for (const request of queued) this.transmit(request);
  }

  forgetSession() {
    this.token = null;
    this.user = null;
    this.lastReadyUser = null;
    this.ledger = new SubscriptionLedger();
    this.storedPositions = {};
    if (this.storage) {
      this.storage.removeItem(this.storageKey + 'token');
      this.storage.removeItem(this.storageKey + 'positions');
    }
  }

  // ---- heartbeat ----

  startBeat() {
    clearInterval(this.timers.beat);
    const tick = Math.max(20, Math.min(1000, this.heartbeat.pingAfterMs / 4));
    this.timers.beat = setInterval(() => this.beat(), tick);
  }

  beat() {
    const now = Date.now();
    const quiet = now - this.lastHeard;
    if (quiet >= this.heartbeat.deadAfterMs) { this.lost(`no frame from the server for ${quiet} ms`); return; }
    if (quiet >= this.heartbeat.pingAfterMs && !this.pingOutstanding && this.state === 'ready') {
      this.pingOutstanding = true;
      this.transmit(this.makeRequest('ping', {}, { internal: true }));
    }
    for (const request of this.inFlight.values()) {
      if (!request.keyed && request.deadline <= now) {
        this.inFlight.delete(request.id);
        request.reject(new HuddleError('timeout', `no reply to ${request.op} within ${this.requestTimeoutMs} ms`));
      }
    }
  }

  // ---- requests ----

  makeRequest(op, args, { resend, internal = false } = {}) {
    const request = { op, args: { ...args }, internal, id: null, deadline: 0, resolve: null, reject: null };
    const key = IDEMPOTENCY_KEYS[op];
    if (key && request.args[key] === undefined) request.args[key] = makeClientId();
    if (key && request.args[key] === null) delete request.args[key]; // the caller opted out of the key
    // A keyed write is the outbox's: it waits for a connection and its reply however long it
    // takes (a dead connection is found by the heartbeat), since giving up could not undo it.
    request.keyed = key !== undefined && request.args[key] !== undefined;
    request.resend = resend ?? (SAFE_TO_REPEAT.has(op) || request.keyed);
    request.promise = new Promise((resolve, reject) => { request.resolve = resolve; request.reject = reject; });
    request.promise.catch(() => {}); // internal requests are not awaited
    return request;
  }

  /** Sends `op` with `args` (the op's fields, protocol.md) and resolves with the reply's
   * `result`, or rejects with a HuddleError. Made while not connected, it waits for the
   * connection. `options.resend` overrides whether it goes out again after a drop. */
  request(op, args = {}, options = {}) {
    const request = this.makeRequest(op, args, options);
    this.submit(request);
    return request.promise;
  }

  submit(request) {
    if (this.state === 'stopped') { request.reject(new HuddleError('closed', 'the client is stopped')); return; }
    if (this.state === 'ready') { this.transmit(request); return; }
    if (this.queued.length >= this.maxQueued) { request.reject(new HuddleError('overloaded', 'too many requests waiting for a connection')); return; }
    this.queued.push(request);
    if (!request.keyed && !request.internal) {
      setTimeout(() => {
        const index = this.queued.indexOf(request);
        if (index < 0) return;
        this.queued.splice(index, 1);
        request.reject(new HuddleError('timeout', `no connection for ${request.op} within ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
    }
  }

  transmit(request) {
    if (!this.ws || this.state !== 'ready') { this.queued.push(request); return; }
    this.nextId += 1;
    request.id = String(this.nextId);
    request.deadline = Date.now() + this.requestTimeoutMs;
    const message = { id: request.id, op: request.op, ...request.args };
    if (request.subscribe) {
      const since = this.ledger.position(request.args.channel);
      if (since) message.since = since;
    }
    this.inFlight.set(request.id, request);
    try { this.ws.send(JSON.stringify(message)); } catch (error) { this.lost(`send failed: ${error.message}`); }
  }

  // ---- incoming ----

  receive(text) {
    this.lastHeard = Date.now();
    let message;
    try { message = JSON.parse(text); } catch { return; }
    if (message === null || typeof message !== 'object') return;
    if ('id' in message && !('event' in message)) { this.reply(message); return; }
    this.event(message);
  }

  reply(message) {
    const request = this.inFlight.get(message.id);
    if (!request) return;
    this.inFlight.delete(message.id);
    if (request.op === 'ping' && request.internal) this.pingOutstanding = false;
    if (message.ok) {
      // Handled before any later message: a subscribe's replay must precede the live events behind it.
      if (request.onResult) request.onResult(message.result ?? {});
      request.resolve(message.result ?? {});
    }
    else {
      const { code = 'internal_error', message: text = '', ...details } = message.error ?? {};
      request.reject(new HuddleError(code, text, details));
    }
  }

  event(message) {
    const name = message.event;
    switch (name) {
      case 'session':
        this.emit('session', message);
        if (this.state === 'signing_in') this.ready(message.user);
        return;
      case 'auth_failed':
        this.refusal = message.error ?? null;
        this.emit('auth_failed', message);
        return;
      case 'publication':
        this.livePublication(message);
        return;
      default:
        if (FEED_EVENTS.has(name)) this.emit('feed', message);
        this.emit(name, message);
    }
  }

  livePublication(message) {
    const verdict = this.ledger.offer(message.channel, message.epoch, message.offset, false);
    if (verdict === 'deliver') { this.deliver(message); return; }
    if (verdict === 'gap') {
      this.ledger.beginResync(message.channel);
      this.sendSubscribe(message.channel, true);
    }
  }

  deliver(publication) {
    this.emit('publication', publication);
    this.savePositions(false);
  }

  // ---- subscriptions ----

  /** A subscribe of the app's is resent after a drop (its promise waits); a resume is not (the
   * next connection resumes every channel anyway). */
  sendSubscribe(channel, resuming, { mine = false } = {}) {
    const request = this.makeRequest('subscribe', { channel }, { resend: mine, internal: !mine });
    request.subscribe = true;
    request.onResult = (result) => this.subscribed(channel, result, resuming);
    request.promise.catch(
      (error) => {
        if (error.code === 'connection_lost' || error.code === 'closed') return; // resumed on the next connection
        if (!this.ledger.entries.has(channel)) return;
        if (error.code === 'rate_limited' || error.code === 'timeout' || error.code === 'unavailable') {
          setTimeout(() => { if (this.state === 'ready' && this.ledger.entries.has(channel)) this.sendSubscribe(channel, true); }, error.retryAfterMs ?? 1000);
          return;
        }
        this.ledger.untrack(channel);
        this.emit('subscription_ended', { channel, error });
      });
    this.submit(request);
    return request.promise;
  }

  subscribed(channel, result, resuming) {
    if (!this.ledger.entries.has(channel)) return;
    for (const publication of result.publications ?? []) {
      const full = { event: 'publication', channel, epoch: result.epoch, ...publication };
      if (this.ledger.offer(channel, result.epoch, publication.offset, true) === 'deliver') this.deliver(full);
    }
    this.ledger.subscribed(channel, result.epoch, result.offset);
    this.savePositions(false);
    if (result.current) this.emit('whereabouts', { user: channel.slice(4), ...result.current });
    if (resuming && 'recovered' in result) this.emit('recovered', { channel, recovered: result.recovered });
  }

  /** Subscribes to `channel` and keeps it subscribed across reconnects. Resumes after `since`,
   * or after the position saved in `storage` for it; the replayed publications arrive as
   * `publication` events before the promise resolves. */
  async subscribe(channel, { since } = {}) {
    const position = since ?? this.storedPositions[channel] ?? undefined;
    this.ledger.track(channel, position);
    return this.sendSubscribe(channel, position !== undefined, { mine: true });
  }

  /** Stops following `channel` (it is no longer resumed). */
  async unsubscribe(channel) {
    this.ledger.untrack(channel);
    delete this.storedPositions[channel];
    this.savePositions(false);
    return this.request('unsubscribe', { channel }, { resend: false });
  }

  /** The last delivered position of each subscribed channel. */
  get positions() { return this.ledger.positions(); }

  savePositions(now) {
    if (!this.storage) return;
    const write = () => {
      this.timers.save = null;
      const all = { ...this.storedPositions, ...this.ledger.positions() };
      this.storage.setItem(this.storageKey + 'positions', JSON.stringify(all));
    };
    if (now) { clearTimeout(this.timers.save); write(); return; }
    if (!this.timers.save) this.timers.save = setTimeout(write, 250);
  }

  // ---- accounts ----

  async signedIn(result) {
    this.token = result.token;
    this.user = result.user;
    this.lastReadyUser = result.user.username;
    if (this.storage) await this.storage.setItem(this.storageKey + 'token', result.token);
    this.emit('signed_in', { user: result.user });
    return result;
  }

  ping() { return this.request('ping'); }
  signup(args) { return this.request('signup', args).then((r) => this.signedIn(r)); }
  login(args) { return this.request('login', args).then((r) => this.signedIn(r)); }
  auth(token) {
    return this.request('auth', { token }).then(async (r) => {
      await this.signedIn({ ...r, token });
      return r;
    });
  }
  /** Revokes the session (every one with `all`); the client then continues anonymously. */
  logout({ all = false } = {}) {
    this.signingOut = true;
    return this.request('logout', all ? { all: true } : {}).catch((error) => { this.signingOut = false; throw error; });
  }
  whoami() { return this.request('whoami'); }
  /** `account_delete` (protocol.md "Deletion and retention"): `{ password }`, or `{ token, nonce? }`
   * of a fresh sign-in with a linked identity. Everything the server holds about the user goes;
   * the close 4001 that follows is expected: the client forgets the token and continues
   * anonymously, as after `logout`. A refusal (`invalid_credentials`, `too_many_attempts`…)
   * deletes nothing and keeps the session. */
  accountDelete(proof) {
    this.signingOut = true;
    return this.request('account_delete', proof, { resend: false }).catch((error) => { this.signingOut = false; throw error; });
  }
  /** `account_export`: everything the server holds about the user, as `{ export: {...} }`
   * (photos by hash: fetch each with `photo(hash)`). */
  accountExport() { return this.request('account_export'); }

  // ---- identities ----

  /** `identity_signin` with an OpenID Connect ID token: `{ token, nonce?, username?, device? }`. */
  identitySignIn(args) { return this.request('identity_signin', args).then((r) => this.signedIn(r)); }
  /** `app_auth` with a token the app's backend signed: `{ token, device? }`. */
  appAuth(args) { return this.request('app_auth', args).then((r) => this.signedIn(r)); }
  identityLink(args) { return this.request('identity_link', args); }
  identityUnlink(issuer, subject) { return this.request('identity_unlink', { issuer, subject }); }
  identities() { return this.request('identities'); }

  // ---- channels ----

  publish(channel, data, { type, clientId } = {}) {
    const args = { channel, data };
    if (type !== undefined) args.type = type;
    if (clientId !== undefined) args.client_id = clientId;
    return this.request('publish', args);
  }
  history(channel, { before, limit } = {}) { return this.request('history', compact({ channel, before, limit })); }
  presence(channel) { return this.request('presence', { channel }); }

  // ---- friends ----

  userSearch(prefix, { limit } = {}) { return this.request('user_search', compact({ prefix, limit })); }
  friendRequest(user, { message, clientId } = {}) { return this.request('friend_request', compact({ user, message, client_id: clientId })); }
  friendRequests() { return this.request('friend_requests'); }
  friendAccept(user, { clientId } = {}) { return this.request('friend_accept', compact({ user, client_id: clientId })); }
  friendDecline(user, { clientId } = {}) { return this.request('friend_decline', compact({ user, client_id: clientId })); }
  friendCancel(user, { clientId } = {}) { return this.request('friend_cancel', compact({ user, client_id: clientId })); }
  friendRemove(user, { clientId } = {}) { return this.request('friend_remove', compact({ user, client_id: clientId })); }
  friends() { return this.request('friends'); }

  // ---- blocking and reports ----

  block(user, { clientId } = {}) { return this.request('block', compact({ user, client_id: clientId })); }
  unblock(user, { clientId } = {}) { return this.request('unblock', compact({ user, client_id: clientId })); }
  blocks() { return this.request('blocks'); }
  /** `target`: `{ kind: 'user', user }`, `{ kind: 'message', channel, offset }`,
   * `{ kind: 'post', post }` or `{ kind: 'comment', post, comment }` (protocol.md "Reports"). */
  report(target, reason, { text } = {}) { return this.request('report', compact({ ...target, reason, text })); }

  // ---- chat ----

  /** The `chat:A~B` room of two users (names in ascending byte order). */
  static chatChannel(a, b) {
    // Usernames are ASCII, so comparing code units is comparing bytes.
    const [x, y] = [a.toLowerCase(), b.toLowerCase()].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
    return `chat:${x}~${y}`;
  }
  markRead(channel, offset, { clientId } = {}) { return this.request('mark_read', compact({ channel, offset, client_id: clientId })); }
  unread() { return this.request('unread'); }
  typing(channel) { return this.request('typing', { channel }, { resend: false }); }

  // ---- feed ----

  post(text, { activity, at, clientId } = {}) { return this.request('post', compact({ text, activity, at, client_id: clientId })); }
  feed({ before, limit } = {}) { return this.request('feed', compact({ before, limit })); }
  like(post, { liked, clientId } = {}) { return this.request('like', compact({ post, liked, client_id: clientId })); }
  comment(post, text, { clientId } = {}) { return this.request('comment', compact({ post, text, client_id: clientId })); }
  comments(post, { before, limit } = {}) { return this.request('comments', compact({ post, before, limit })); }
  postDelete(post, { clientId } = {}) { return this.request('post_delete', compact({ post, client_id: clientId })); }

  // ---- activities ----

  activities() { return this.request('activities'); }
  activityOn(activity, { friends, expiresIn, clientId } = {}) {
    return this.request('activity_on', compact({ activity, friends, expires_in: expiresIn, client_id: clientId }));
  }
  activityOff(activity, { clientId } = {}) { return this.request('activity_off', compact({ activity, client_id: clientId })); }
  matches({ order } = {}) { return this.request('matches', compact({ order })); }

  // ---- places ----

  placeSet({ placeId, label, lat, lon, radius, clientId }) {
    return this.request('place_set', compact({ place_id: placeId, label, lat, lon, radius, client_id: clientId }));
  }
  placeRemove(placeId, { clientId } = {}) { return this.request('place_remove', compact({ place_id: placeId, client_id: clientId })); }
  places() { return this.request('places'); }
  locationFix({ lat, lon, accuracy, time = Date.now() }) { return this.request('location_fix', { lat, lon, accuracy, time }); }
  region(placeId, event, { time = Date.now() } = {}) { return this.request('region', { place_id: placeId, event, time }); }
  where(user) { return this.request('where', { user }); }

  // ---- memories ----

  memoryCreate({ title, date, placeName, position, clientId }) {
    return this.request('memory_create', compact({ title, date, place_name: placeName, position, client_id: clientId }));
  }
  memoryUpdate(memory, { title, date, placeName, position, clientId } = {}) {
    return this.request('memory_update', compact({ memory, title, date, place_name: placeName, position, client_id: clientId }));
  }
  memoryDelete(memory, { clientId } = {}) { return this.request('memory_delete', compact({ memory, client_id: clientId })); }
  memories() { return this.request('memories'); }
  memory(memory) { return this.request('memory', { memory }); }
  pointAdd(memory, { time, position, placeName, note, photos, clientId }) {
    return this.request('point_add', compact({ memory, time, position, place_name: placeName, note, photos, client_id: clientId }));
  }
  pointUpdate(memory, point, { time, position, placeName, note, photos, clientId } = {}) {
    return this.request('point_update', compact({ memory, point, time, position, place_name: placeName, note, photos, client_id: clientId }));
  }
  pointDelete(memory, point, { clientId } = {}) { return this.request('point_delete', compact({ memory, point, client_id: clientId })); }

  // ---- profiles, sessions, passwords ----

  profile() { return this.request('profile'); }
  /** `displayName`/`avatar` left out stay as they are; '' clears one. */
  profileSet({ displayName, avatar } = {}) { return this.request('profile_set', compact({ display_name: displayName, avatar })); }
  sessions() { return this.request('sessions'); }
  sessionRevoke(session) { return this.request('session_revoke', { session }); }
  passwordChange(oldPassword, newPassword, { revokeOthers } = {}) {
    return this.request('password_change', compact({ old_password: oldPassword, new_password: newPassword, revoke_others: revokeOthers }));
  }
  passwordResetRequest(login) { return this.request('password_reset_request', { login }); }
  passwordReset({ login, code, newPassword }) { return this.request('password_reset', { login, code, new_password: newPassword }); }

  // ---- photos (HTTP, with the session token) ----

  httpBase() {
    const url = new URL(this.urls[this.urlIndex % this.urls.length]);
    url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
    url.pathname = '';
    return url.origin;
  }

  /** `fetch` of one of the server's HTTP APIs with the session token; any status but 2xx
   * rejects with the body's HuddleError (`what` says what needed the sign-in). */
  async authorizedFetch(path, what, init = {}) {
    if (!this.token) throw new HuddleError('not_authenticated', `sign in before ${what}`);
    let response;
    try {
      response = await fetch(this.httpBase() + path, { ...init, headers: { ...init.headers, Authorization: 'Bearer ' + this.token } });
    } catch (error) {
      throw new HuddleError('connection_lost', `no answer from the server (${error.message})`);
    }
    if (!response.ok) await httpResult(response);
    return response;
  }

  /** Uploads a photo's bytes (Blob, ArrayBuffer or typed array); resolves with {hash, size}. */
  async uploadPhoto(bytes) {
    return httpResult(await this.authorizedFetch('/api/v1/photos', 'uploading photos', { method: 'PUT', body: bytes }));
  }

  /** Fetches a photo the user owns; resolves with a Blob. */
  async photo(hash) {
    return (await this.authorizedFetch('/api/v1/photos/' + encodeURIComponent(hash), 'fetching photos')).blob();
  }

  /** `GET /api/v1/export`: the archive of everything the server holds about the user (a tar of
   * export.json and the photos), read as it arrives; `onProgress({ received, total })` after
   * each piece. Resolves with `{ filename, size, blob }` in a page (a `document` exists) and
   * `{ filename, size, bytes }` elsewhere (Node, React Native). A body shorter than its
   * Content-Length is a failed download (`download_incomplete`), never a short archive. */
  async exportArchive({ onProgress } = {}) {
    const response = await this.authorizedFetch('/api/v1/export', 'downloading your data');
    const filename = /filename="([^"]+)"/.exec(response.headers.get('Content-Disposition') ?? '')?.[1] ?? 'huddle-export.tar';
    const length = response.headers.get('Content-Length');
    const total = length === null ? null : Number(length);
    const chunks = [];
    let received = 0;
    const incomplete = (why) => new HuddleError('download_incomplete',
      `the archive stopped after ${received}${total === null ? '' : ` of ${total}`} bytes (${why}): download it again`, { received, total });
    const take = (chunk) => {
      chunks.push(chunk);
      received += chunk.byteLength;
      if (onProgress) this.safely(() => onProgress({ received, total }));
    };
    try {
      const reader = response.body?.getReader?.();
      if (reader) for (let step = await reader.read(); !step.done; step = await reader.read()) take(step.value);
      else take(new Uint8Array(await response.arrayBuffer())); // React Native's fetch does not stream
    } catch (error) {
      throw incomplete(error.message);
    }
    if (total !== null && received !== total) throw incomplete('the connection closed early');
    const type = response.headers.get('Content-Type') ?? 'application/x-tar';
    if (globalThis.document && typeof Blob === 'function') return { filename, size: received, blob: new Blob(chunks, { type }) };
    const bytes = new Uint8Array(received);
    let at = 0;
    for (const chunk of chunks) { bytes.set(chunk, at); at += chunk.byteLength; }
    return { filename, size: received, bytes };
  }
}

/** A reply of the HTTP APIs: the JSON body, or its `error` as a HuddleError (`status` the HTTP
 * status; a 429 without `retry_after_ms` in the body takes it from `Retry-After`). */
async function httpResult(response) {
  let body = {};
  try { body = await response.json(); } catch { /* not JSON */ }
  if (response.ok) return body;
  const { code = 'http_' + response.status, message = response.statusText, ...details } = body.error ?? {};
  const retryAfter = Number(response.headers.get('Retry-After'));
  if (details.retry_after_ms === undefined && retryAfter > 0) details.retry_after_ms = retryAfter * 1000;
  throw new HuddleError(code, message, { status: response.status, ...details });
}

/** The object without its undefined members (optional arguments left out). */
function compact(object) {
  const out = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out;
}

export default HuddleClient;
