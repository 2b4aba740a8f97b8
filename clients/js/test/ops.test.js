// Every op and every event of protocol.md through the SDK, against the real server.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { HuddleClient, HuddleError } from '../huddle.js';
import { makeClient, signedUp, befriend, nextEvent, collect, until, uniqueName, stopClients, MemoryStorage, serverURL } from './clients.js';

after(stopClients);

test('accounts: signup, login, auth, whoami, ping, logout, and the subprotocol token', async () => {
  const alice = await signedUp('ac');
  const username = alice.user.username;
  assert.equal(alice.token.length, 43);
  assert.equal((await alice.whoami()).user.username, username);
  assert.equal(typeof (await alice.ping()).time, 'number');

  // A second device logs in with the password, a third presents the token in the subprotocol.
  const phone = makeClient();
  await phone.start();
  const login = await phone.login({ login: username, password: 'correct horse battery', device: 'phone' });
  assert.equal(login.user.username, username);

  const storage = new MemoryStorage();
  await storage.setItem('huddle.token', login.token);
  const tablet = makeClient({ storage });
  const session = nextEvent(tablet, 'session');
  const connected = nextEvent(tablet, 'connected');
  await tablet.start();
  assert.equal((await session).user.username, username);
  assert.equal((await connected).user.username, username);

  const anonymous = makeClient();
  await anonymous.start();
  assert.equal((await anonymous.auth(login.token)).user.username, username);

  await assert.rejects(phone.login({ login: username, password: 'x' }), (e) => e instanceof HuddleError && e.code === 'already_authenticated');
  const stranger = makeClient();
  await stranger.start();
  await assert.rejects(stranger.whoami(), { code: 'not_authenticated' });
  await assert.rejects(stranger.login({ login: username, password: 'wrong password!' }), { code: 'invalid_credentials' });

  // Logout of every session: the token connection is told and stops, forgetting its token.
  const stopped = nextEvent(tablet, 'stopped');
  assert.equal((await phone.logout({ all: true })).revoked, 2); // the signup's session and the login's
  const reason = await stopped;
  assert.equal(reason.reason, 'authentication_failed');
  assert.equal(await storage.getItem('huddle.token'), null);

  // A refused token: auth_failed, then stopped.
  const refused = makeClient({ token: login.token });
  const failed = nextEvent(refused, 'auth_failed');
  const refusedStop = nextEvent(refused, 'stopped');
  await refused.start();
  assert.equal((await failed).error.code, 'invalid_token');
  assert.equal((await refusedStop).code, 'invalid_token');
});

test('channels: subscribe, publish, history, presence, unsubscribe', async () => {
  const a = await signedUp('ch');
  const b = await signedUp('ch');
  const room = `room:${uniqueName('r')}`;
  const seen = collect(b, 'publication', (p) => p.channel === room);
  const first = await b.subscribe(room);
  assert.equal(first.offset, 0);
  await a.subscribe(room);
  assert.deepEqual((await a.presence(room)).users.sort(), [a.user.username, b.user.username].sort());
  const published = await a.publish(room, { text: 'one' }, { type: 'note', clientId: 'k1' });
  assert.equal(published.offset, 1);
  await a.publish(room, { text: 'two' });
  const again = await a.publish(room, { text: 'one' }, { type: 'note', clientId: 'k1' });
  assert.equal(again.duplicate, true);
  await until(() => seen.length === 2, 'both publications');
  assert.deepEqual(seen.map((p) => [p.offset, p.data.text, p.type, p.from]), [[1, 'one', 'note', a.user.username], [2, 'two', 'message', a.user.username]]);
  assert.equal(seen[0].client_id, 'k1');
  const page = await b.history(room, { limit: 1 });
  assert.deepEqual(page.publications.map((p) => p.offset), [2]);
  assert.equal(page.next_before, 2);
  assert.deepEqual((await b.history(room, { before: 2 })).publications.map((p) => p.offset), [1]);
  await b.unsubscribe(room);
  assert.deepEqual(b.positions[room], undefined);
  await assert.rejects(b.unsubscribe(room), { code: 'not_subscribed' });
  await assert.rejects(a.publish('bogus', {}), { code: 'invalid_channel' });
});

test('friends: search, request with message, decline, cancel, cooldown, accept, list, remove; inbox notices and presence', async () => {
  const a = await signedUp('fa');
  const b = await signedUp('fb');
  const [an, bn] = [a.user.username, b.user.username];
  const inboxA = collect(a, 'publication', (p) => p.channel === `inbox:${an}`);
  const inboxB = collect(b, 'publication', (p) => p.channel === `inbox:${bn}`);
  await a.subscribe(`inbox:${an}`);
  await b.subscribe(`inbox:${bn}`);
  assert.deepEqual((await a.userSearch(bn)).users, [bn]);

  assert.equal((await a.friendRequest(bn, { message: 'coffee?' })).status, 'requested');
  const waiting = await b.friendRequests();
  assert.deepEqual(waiting.incoming.map((r) => [r.user, r.message]), [[an, 'coffee?']]);
  assert.deepEqual((await a.friendRequests()).outgoing.map((r) => r.user), [bn]);
  await b.friendDecline(an);
  await a.friendRequest(bn);
  await a.friendCancel(bn);
  await assert.rejects(b.friendAccept(an), { code: 'no_request' });
  // Asking the same person again right after a cancel waits out a cooldown (protocol.md, "Limits").
  await assert.rejects(a.friendRequest(bn), (error) => error.code === 'request_cooldown' && error.retryAfterMs > 0);
  await b.friendRequest(an, { message: 'again' });
  const online = nextEvent(a, 'presence', (e) => e.user === bn && e.online);
  await a.friendAccept(bn);
  await online;
  assert.deepEqual((await a.friends()).friends, [{ username: bn, online: true }]);
  await b.friendRemove(an);
  assert.deepEqual((await a.friends()).friends, []);
  await until(() => inboxA.length === 7 && inboxB.length === 7, 'seven notices each');
  const types = (inbox) => inbox.map((p) => p.type);
  assert.deepEqual(types(inboxA), ['friend_request', 'friend_declined', 'friend_request', 'friend_cancelled', 'friend_request', 'friend_accepted', 'friend_removed']);
  assert.deepEqual(types(inboxB), types(inboxA));
  assert.equal(inboxB[4].data.message, 'again');
  assert.equal(inboxB[4].from, null);
});

test('blocking and reports: block, blocks, the blocked side refused as unknown, report, unblock', async () => {
  const a = await signedUp('ba');
  const b = await signedUp('bb');
  const [an, bn] = [a.user.username, b.user.username];
  assert.equal(typeof (await a.report({ kind: 'user', user: bn }, 'spam', { text: 'ads' })).report, 'number');
  await assert.rejects(a.report({ kind: 'user', user: bn }, 'spam'), { code: 'already_reported' });
  await a.block(bn);
  assert.deepEqual((await a.blocks()).users, [bn]);
  await assert.rejects(b.friendRequest(an), { code: 'user_not_found' });
  await assert.rejects(a.friendRequest(bn), { code: 'user_blocked' });
  assert.deepEqual((await b.userSearch(an)).users, []);
  await a.unblock(bn);
  assert.deepEqual((await a.blocks()).users, []);
  assert.equal((await b.friendRequest(an)).status, 'requested');
});

test('chat: messages both ways, mark_read, unread badges, typing', async () => {
  const a = await signedUp('ca');
  const b = await signedUp('cb');
  await befriend(a, b);
  const room = HuddleClient.chatChannel(a.user.username, b.user.username);
  assert.equal(room, HuddleClient.chatChannel(b.user.username, a.user.username));
  await a.subscribe(room);
  await b.subscribe(room);
  const typing = nextEvent(b, 'typing', (e) => e.channel === room);
  await a.typing(room);
  assert.equal((await typing).user, a.user.username);
  await a.publish(room, { text: 'hi' });
  await a.publish(room, { text: 'there' });
  const unread = await b.unread();
  assert.deepEqual(unread.rooms.map((r) => [r.channel, r.unread]), [[room, 2]]);
  assert.equal(unread.total, 2);
  const marked = await b.markRead(room, 1);
  assert.deepEqual([marked.read, marked.unread, marked.badge], [1, 1, 1]);
  await b.publish(room, { text: 'answer' });
  assert.equal((await b.unread()).total, 0);
});

test('feed: post, feed, like, comment, comments, post_delete, with their live events', async () => {
  const a = await signedUp('pa');
  const b = await signedUp('pb');
  await befriend(a, b);
  const postEvent = nextEvent(b, 'post');
  const { post } = await a.post('gym at 6?', { activity: 'Gym', at: Date.now() + 3600000 });
  assert.equal((await postEvent).post.id, post.id);
  const feed = await b.feed({ limit: 5 });
  assert.equal(feed.posts[0].id, post.id);
  assert.equal(feed.posts[0].activity, 'Gym');
  const likeEvent = nextEvent(a, 'like', (e) => e.post === post.id);
  const like = await b.like(post.id, { liked: true });
  assert.deepEqual([like.liked, like.likes], [true, 1]);
  assert.equal((await likeEvent).user, b.user.username);
  await assert.rejects(b.like(post.id, { liked: true }), { code: 'already_liked' });
  assert.equal((await b.like(post.id)).liked, false);
  const commentEvent = nextEvent(a, 'comment', (e) => e.post === post.id);
  const comment = await b.comment(post.id, 'in');
  assert.equal((await commentEvent).comment.id, comment.comment.id);
  assert.deepEqual((await a.comments(post.id)).comments.map((c) => c.text), ['in']);
  await assert.rejects(b.postDelete(post.id), { code: 'forbidden' });
  const feedEvents = collect(b, 'feed');
  const deleted = nextEvent(b, 'post_deleted');
  await a.postDelete(post.id);
  assert.equal((await deleted).post, post.id);
  assert.equal(feedEvents.at(-1).event, 'post_deleted');
  await assert.rejects(b.comments(post.id), { code: 'post_not_found' });
});

test('activities: list, on, matches on both sides, off', async () => {
  const a = await signedUp('aa');
  const b = await signedUp('ab');
  await befriend(a, b);
  await a.subscribe(`inbox:${a.user.username}`);
  await b.subscribe(`inbox:${b.user.username}`);
  assert.ok((await a.activities()).available.includes('Coffee'));
  const matchA = nextEvent(a, 'publication', (p) => p.type === 'match');
  const matchB = nextEvent(b, 'publication', (p) => p.type === 'match');
  const status = await a.activityOn('coffee', { expiresIn: 600 });
  assert.equal(status.activity, 'Coffee');
  await b.activityOn('Coffee', { friends: [a.user.username] });
  assert.equal((await matchA).data.user, b.user.username);
  assert.equal((await matchB).data.user, a.user.username);
  assert.deepEqual((await a.matches({ order: 'activity' })).matches.map((m) => [m.user, m.activity]), [[b.user.username, 'Coffee']]);
  assert.deepEqual((await a.activities()).mine.map((s) => s.activity), ['Coffee']);
  const ended = nextEvent(b, 'publication', (p) => p.type === 'match_ended');
  await a.activityOff('Coffee');
  assert.equal((await ended).data.reason, 'off');
  await assert.rejects(a.activityOff('Coffee'), { code: 'not_on' });
  await assert.rejects(a.activityOn('Skydiving'), { code: 'unknown_activity' });
});

test('places: place_set, places, location_fix, region, where, place_remove; whereabouts and place publications', async () => {
  const a = await signedUp('la');
  const b = await signedUp('lb');
  await befriend(a, b);
  const { place: home } = await a.placeSet({ label: 'home', lat: 48.8566, lon: 2.3522, radius: 100 });
  const { place: work } = await a.placeSet({ label: 'work', lat: 48.8738, lon: 2.2950, radius: 150 });
  assert.deepEqual((await a.places()).places.map((p) => p.label), ['home', 'work']);
  const whereabouts = nextEvent(b, 'whereabouts');
  const loc = `loc:${a.user.username}`;
  await b.subscribe(loc);
  assert.equal((await whereabouts).place, 'unknown');
  const changes = collect(b, 'publication', (p) => p.channel === loc);
  const now = Date.now();
  const fix = await a.locationFix({ lat: 48.8566, lon: 2.3522, accuracy: 10, time: now - 60000 });
  assert.deepEqual([fix.place, fix.changed], ['home', true]);
  assert.equal((await a.locationFix({ lat: 48.8566, lon: 2.3522, accuracy: 10, time: now - 60000 })).ignored, true);
  const region = await a.region(work.id, 'enter', { time: now - 30000 });
  assert.deepEqual([region.place, region.place_id], ['work', work.id]);
  assert.equal((await b.where(a.user.username)).place, 'work');
  await a.placeRemove(work.id);
  await until(() => changes.length === 3, 'three place changes');
  assert.deepEqual(changes.map((p) => p.data.place), ['home', 'work', 'unknown']);
  assert.ok(changes.every((p) => p.type === 'place' && !('lat' in p.data)));
  await assert.rejects(b.request('places', { user: a.user.username }), { code: 'forbidden' });
  await assert.rejects(a.placeRemove(home.id + 100), { code: 'place_not_found' });
});

test('memories: create, update, list, read, points, photos, delete; memory_changed', async () => {
  const a = await signedUp('ma');
  const other = makeClient({ token: a.token });
  await other.start();
  await nextEvent(other, 'connected');
  const changes = collect(other, 'memory_changed');
  const { memory } = await a.memoryCreate({ title: 'Lisbon', date: '2025-06-14', placeName: 'Alfama', position: { lat: 38.7, lon: -9.1 } });
  assert.deepEqual(memory.points, []);
  await a.memoryUpdate(memory.id, { title: 'Lisboa', position: null });
  const photoBytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
  const upload = await a.uploadPhoto(photoBytes);
  assert.match(upload.hash, /^[0-9a-f]{64}$/);
  assert.equal(upload.size, photoBytes.length);
  const fetched = await a.photo(upload.hash);
  assert.equal(fetched.type, 'image/png');
  assert.deepEqual(new Uint8Array(await fetched.arrayBuffer()), photoBytes);
  await assert.rejects(other.photo('0'.repeat(64)), { code: 'photo_not_found' });
  const { point } = await a.pointAdd(memory.id, { time: Date.UTC(2025, 5, 14, 10), note: 'tram 28', photos: [upload.hash] });
  await a.pointUpdate(memory.id, point.id, { note: 'tram 28, again' });
  const full = await a.memory(memory.id);
  assert.deepEqual(full.memory.points.map((p) => [p.note, p.photos]), [['tram 28, again', [upload.hash]]]);
  assert.equal((await a.memories()).memories[0].title, 'Lisboa');
  await a.pointDelete(memory.id, point.id);
  await a.memoryDelete(memory.id);
  await assert.rejects(a.memory(memory.id), { code: 'memory_not_found' });
  await until(() => changes.length === 6, 'six memory changes');
  assert.deepEqual(changes.map((e) => e.action), ['created', 'updated', 'point_added', 'point_updated', 'point_deleted', 'deleted']);
});

test('several server URLs: an unreachable first one is skipped', async () => {
  const client = new HuddleClient({ urls: ['ws://127.0.0.1:1', serverURL], reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
  const reconnecting = nextEvent(client, 'reconnecting');
  const connected = nextEvent(client, 'connected');
  await client.start();
  assert.equal((await reconnecting).attempt, 1);
  await connected;
  assert.equal(typeof (await client.ping()).time, 'number');
  client.stop();
});

test('profiles, sessions and passwords: set and read, the live profile event, friends see it, revoke a session by id, change the password', async () => {
  const a = await signedUp('pa');
  const b = await signedUp('pb');
  await befriend(a, b);
  const [an, bn] = [a.user.username, b.user.username];
  const heard = nextEvent(b, 'profile', (e) => e.user === an);
  assert.deepEqual(await a.profileSet({ displayName: 'Ann A.' }), { username: an, display_name: 'Ann A.', avatar: null });
  assert.equal((await heard).display_name, 'Ann A.');
  assert.equal((await a.profile()).display_name, 'Ann A.');
  assert.equal((await b.friends()).friends.find((f) => f.username === an).display_name, 'Ann A.');
  await assert.rejects(a.profileSet({ displayName: ' x' }), { code: 'invalid_display_name' });

  const phone = makeClient();
  await phone.start();
  await phone.login({ login: bn, password: 'correct horse battery', device: 'phone' });
  const { sessions, total } = await b.sessions();
  assert.equal(total, 2);
  const id = sessions.find((s) => s.device === 'phone').id;
  assert.deepEqual(await b.sessionRevoke(id), { revoked: 1 });
  await assert.rejects(b.sessionRevoke(id), { code: 'session_not_found' });

  await assert.rejects(b.passwordChange('wrong password!', 'a new password'), { code: 'invalid_credentials' });
  assert.deepEqual(await b.passwordChange('correct horse battery', 'a new password'), { revoked: 0 });
  const anonymous = makeClient();
  await anonymous.start();
  await assert.rejects(anonymous.passwordResetRequest(bn), { code: 'unavailable' });
  assert.equal((await anonymous.login({ login: bn, password: 'a new password' })).user.username, bn);
});

test('account export and deletion: the export holds the profile, a wrong password deletes nothing, the friend is told, the client goes on anonymously', async () => {
  const a = await signedUp('xa');
  const b = await signedUp('xb');
  await befriend(a, b);
  const [an, bn] = [a.user.username, b.user.username];
  await b.subscribe(`inbox:${bn}`);
  await a.profileSet({ displayName: 'Leaving' });
  const { export: archive } = await a.accountExport();
  assert.equal(archive.account.username, an);
  assert.equal(archive.profile.display_name, 'Leaving');
  assert.deepEqual(archive.friends, [bn]);

  await assert.rejects(a.accountDelete({ password: 'not the password' }), { code: 'invalid_credentials' });
  assert.equal((await a.whoami()).user.username, an, 'a refused deletion keeps the session');
  const told = nextEvent(b, 'publication', (p) => p.channel === `inbox:${bn}` && p.type === 'friend_removed');
  const anonymous = nextEvent(a, 'connected', (e) => e.user === null);
  assert.deepEqual(await a.accountDelete({ password: 'correct horse battery' }), {});
  assert.equal((await told).data.user, an);
  await anonymous;
  assert.equal(a.token, null);
  assert.ok(a.state !== 'stopped', 'the client goes on');
  assert.deepEqual((await b.friends()).friends, []);
  await assert.rejects(a.login({ login: an, password: 'correct horse battery' }), { code: 'invalid_credentials' });
});

/** The files of a ustar archive, in order, as `{ name, bytes }`; throws unless every header is
 * a ustar one and the archive ends with its two zero blocks exactly. */
function untar(archive) {
  const text = (from, to) => new TextDecoder().decode(archive.subarray(from, to)).replace(/\0[\s\S]*$/, '');
  const files = [];
  let at = 0;
  while (archive.subarray(at, at + 512).some((byte) => byte !== 0)) {
    assert.equal(text(at + 257, at + 263), 'ustar', `the header at ${at} is a ustar one`);
    const size = parseInt(text(at + 124, at + 136).trim(), 8);
    files.push({ name: text(at, at + 100), bytes: archive.subarray(at + 512, at + 512 + size) });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  assert.equal(archive.length, at + 1024, 'two zero blocks end the archive');
  assert.ok(archive.subarray(at).every((byte) => byte === 0));
  return files;
}

test('export archive: export.json and the photos in a tar as long as its Content-Length, with progress; a second one at once is refused with the wait', async () => {
  const a = await signedUp('ea');
  await a.profileSet({ displayName: 'Archived' });
  const photoBytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 9, 8, 7]);
  const { hash } = await a.uploadPhoto(photoBytes);
  const progress = [];
  const archive = await a.exportArchive({ onProgress: (p) => progress.push(p) });
  assert.equal(archive.filename, `huddle-export-${a.user.username}.tar`);
  const bytes = archive.bytes ?? new Uint8Array(await archive.blob.arrayBuffer());
  assert.equal(Boolean(archive.blob), Boolean(globalThis.document), 'a Blob in a page, bytes elsewhere');
  const total = progress.at(-1).total;
  assert.equal(bytes.length, total, 'as long as its Content-Length');
  assert.equal(archive.size, total);
  assert.deepEqual(progress.at(-1), { received: total, total });
  assert.ok(progress.every((p, i) => i === 0 || p.received > progress[i - 1].received), 'progress only grows');

  assert.equal(new TextDecoder().decode(bytes.subarray(0, 11)), 'export.json', 'the first header names export.json');
  const files = untar(bytes);
  assert.deepEqual(files.map((f) => f.name), ['export.json', `photos/${hash}.png`]);
  const exported = JSON.parse(new TextDecoder().decode(files[0].bytes));
  assert.equal(exported.account.username, a.user.username);
  assert.equal(exported.profile.display_name, 'Archived');
  assert.deepEqual(exported.photos.map((p) => p.hash), [hash]);
  assert.deepEqual([...files[1].bytes], [...photoBytes]);

  const refusal = await a.exportArchive().then(() => null, (error) => error);
  assert.ok(refusal instanceof HuddleError, `refused: ${refusal}`);
  assert.equal(refusal.code, 'exports_limited');
  assert.equal(refusal.details.status, 429);
  assert.ok(refusal.retryAfterMs > 0 && refusal.retryAfterMs <= 60000, `retry after ${refusal.retryAfterMs} ms`);

  // Without a token, and with a revoked one (401: sign in again).
  const stranger = makeClient();
  await assert.rejects(stranger.exportArchive(), { code: 'not_authenticated' });
  const revoked = a.token;
  await a.logout();
  await assert.rejects(makeClient({ token: revoked }).exportArchive(), (e) => e instanceof HuddleError && e.code === 'invalid_token' && e.details.status === 401);
});
