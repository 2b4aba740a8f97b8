// The Huddle web app: the seed apps on one page, on the JavaScript SDK. Text from other users
// only ever becomes DOM text (textContent, text nodes), never markup; the page's
// Content-Security-Policy runs no script but this file and the SDK.
import { HuddleClient } from '/sdk/huddle.js';

const $ = (id) => document.getElementById(id);

/** An element with attributes (`on*` functions become listeners) and children (strings become text). */
function h(tag, attributes = {}, ...children) {
  const svg = ['svg', 'g', 'line', 'text', 'circle'].includes(tag);
  const element = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const location_ = window.location;
const client = new HuddleClient({
  url: `${location_.protocol === 'https:' ? 'wss' : 'ws'}://${location_.host}`,
  storage: window.localStorage,
  heartbeat: { pingAfterMs: 10000, deadAfterMs: 20000 },
});
window.huddle = client; // for the console (and the browser tests)

const state = {
  me: null,
  friends: new Map(), // username -> {online}
  unread: new Map(), // chat channel -> unread count
  openRoom: null, // {channel, friend, oldest}
  rooms: new Map(), // chat channel -> Map(offset -> publication)
  posts: new Map(), // id -> post
  whereabouts: new Map(), // friend -> {place, since}
  memories: new Map(),
  openMemory: null,
  activities: [],
  profiles: new Map(), // username -> {display_name, avatar}, each null when unset
  requests: { incoming: [], outgoing: [] },
  blocks: [],
};

// ---- refusals and notices ----

/** A read the app starts on its own (after an event): one that fails while the session ends
 * is of no interest; any other failure is logged for the developer. */
function background(promise) {
  promise.catch((error) => { if (state.me && error?.code !== 'closed') console.warn('huddle:', error?.message ?? error); });
}

/** What a refused request tells the user: the server's message (for humans) or, where that
 * speaks of the protocol, plainer words; with when to try again. */
const PLAIN_REFUSALS = {
  invalid_credentials: 'Wrong password.',
  not_friends: 'You are not friends (any more), so this was not sent.',
  already_reported: 'You already reported this; the moderators have it.',
  already_blocked: 'You already blocked them.',
  not_blocked: 'You had not blocked them.',
  session_not_found: 'That session has ended already.',
  photo_not_found: 'That photo was not uploaded.',
  too_many_reports: 'You have too many reports waiting for the moderators.',
  reports_limited: 'You sent many reports just now.',
  too_many_attempts: 'Too many attempts.',
  exports_limited: 'You downloaded your data a moment ago: one download a minute.',
  too_many_exports: 'Many people are downloading their data right now.',
  download_incomplete: 'The download broke off before the end, so nothing was saved.',
  invalid_token: 'Your session has ended: sign in again.',
  token_expired: 'Your session expired: sign in again.',
  connection_lost: 'The connection dropped before the answer: try again.',
  timeout: 'No answer from the server: try again.',
  closed: 'You are signed out.',
};
function refusal(error) {
  const code = error?.code ?? 'error';
  const raw = String(error?.message ?? error);
  const serverText = raw.startsWith(`${code}: `) ? raw.slice(code.length + 2) : raw;
  const wait = error?.retryAfterMs ? ` Try again in ${Math.max(1, Math.ceil(error.retryAfterMs / 1000))} s.` : '';
  return (PLAIN_REFUSALS[code] ?? (serverText || code)) + wait;
}

let noticeTimer = null;
/** Tells the user the outcome of an action taken outside a form (a block, a report). */
function notify(text, { error = false } = {}) {
  const notice = $('notice');
  notice.textContent = text;
  notice.className = error ? 'notice error' : 'notice';
  notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { notice.hidden = true; }, 10000);
}

/** Shows a refusal of an action taken outside a form. */
const refused = (error) => notify(refusal(error), { error: true });

// ---- people: display names and avatars ----

/** Remembers `username`'s profile from an object that carries it as flat members present only
 * when set (`display_name`, `avatar`; `author_display_name`, `author_avatar` with `prefix`). */
function learnProfile(username, object, prefix = '') {
  state.profiles.set(username, { display_name: object[`${prefix}display_name`] ?? null, avatar: object[`${prefix}avatar`] ?? null });
}
const displayName = (username) => state.profiles.get(username)?.display_name ?? null;
/** "Display Name (username)", or the username alone. */
const nameOf = (username) => (displayName(username) ? `${displayName(username)} (${username})` : username);

/** The avatar's picture when it can be fetched (the user's own, a friend's, or one with a
 * request waiting), else the first letter of the name. */
function avatarOf(username) {
  const profile = state.profiles.get(username);
  // The letter is drawn by CSS (attr()), so it is no part of the name's text.
  const initials = h('span', { class: 'avatar initials', 'aria-hidden': 'true', 'data-initial': [...(profile?.display_name || username)][0].toUpperCase() });
  if (!profile?.avatar) return initials;
  const img = h('img', { class: 'avatar', alt: '', 'data-avatar': profile.avatar });
  photoURL(profile.avatar).then((url) => { img.src = url; }, () => img.replaceWith(initials));
  return img;
}

/** A user as shown to others: avatar, display name, and the username. */
function person(username) {
  const name = displayName(username);
  return h('span', { class: 'person', 'data-user': username }, avatarOf(username),
    name ? [name, ' ', h('span', { class: 'username' }, `(${username})`)] : username);
}

/** Shows a profile change everywhere the user appears. */
function showProfiles() {
  renderMe();
  renderFriends();
  renderRequests();
  for (const post of state.posts.values()) putPost(post);
  for (const who of $('messages').querySelectorAll('.who[data-user]')) who.firstChild.textContent = nameOf(who.dataset.user);
  if (state.openRoom) $('chat-with').textContent = `Chat with ${nameOf(state.openRoom.friend)}`;
}
client.on('profile', ({ user, display_name, avatar }) => {
  state.profiles.set(user, { display_name, avatar });
  showProfiles();
});

// ---- live lists ----

const controlKey = (el) => el.dataset.key ?? el.getAttribute('aria-label') ?? el.textContent.trim();
/** Replaces `list`'s children; a control that had the keyboard focus hands it to its successor
 * (same `data-key`, else the same label), so a live update (an unread count, a presence) never
 * throws a keyboard user out of the list. */
function renderList(list, children) {
  const focused = list.contains(document.activeElement) && document.activeElement !== list ? controlKey(document.activeElement) : null;
  list.replaceChildren(...children);
  if (focused !== null) [...list.querySelectorAll('button, input, select')].find((el) => controlKey(el) === focused)?.focus();
}

// ---- connection state ----

let wasConnected = false;
function showConnection(text, kind) {
  const pill = $('connection');
  pill.textContent = text;
  pill.className = `pill ${kind}`;
}
client.on('connected', ({ user, resumed }) => {
  showConnection(resumed ? 'Resumed' : 'Connected', resumed ? 'resumed' : 'connected');
  if (user && !state.me) enter(user);
  else if (user && resumed) background(refresh()); // live-only events (feed, presence) were missed
  wasConnected = true;
});
client.on('state', ({ state: s }) => {
  if ((s === 'waiting' || s === 'connecting') && wasConnected) showConnection('Reconnecting…', 'reconnecting');
});
/** The server's close reasons (with 4001) in words. */
const SIGN_OUT_REASONS = {
  'logged out': 'This browser was signed out (from another device, or by a password change).',
  'session expired': 'Your session expired.',
  'account deleted': 'Your account was deleted.',
};
client.on('stopped', (reason) => {
  showConnection('Signed out', 'reconnecting');
  if (reason.reason !== 'authentication_failed') return;
  // The session ended (revoked from another device, a password reset, the account deleted):
  // back to the sign-in screen, connected anonymously for the next sign-in.
  const signedIn = state.me !== null;
  leave();
  if (signedIn) $('signin-notice').textContent = `${SIGN_OUT_REASONS[reason.message] ?? `You were signed out (${reason.message ?? reason.code}).`} Sign in again to continue.`;
  client.start();
});

// ---- signing in ----

function formValues(form) { return Object.fromEntries(new FormData(form).entries()); }

async function signIn(action) {
  $('signin-error').textContent = '';
  $('signin-notice').textContent = '';
  try { await action(); enter(client.user); } catch (error) { $('signin-error').textContent = error.message; }
}
$('signup-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const { username, email, password } = formValues(event.target);
  signIn(() => client.signup({ username, email, password, device: 'web' }));
});
$('login-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const { login, password } = formValues(event.target);
  signIn(() => client.login({ login, password, device: 'web' }));
});
$('logout').addEventListener('click', async () => {
  try { await client.logout(); } finally { leave(); }
});

function enter(user) {
  if (state.me === user.username) return;
  state.me = user.username;
  $('signin-notice').textContent = '';
  renderMe();
  $('signin').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = false;
  show('chat');
  client.subscribe(`inbox:${user.username}`);
  background(refresh());
}

function leave() {
  state.me = null;
  state.friends.clear();
  state.posts.clear();
  state.profiles.clear();
  // Photos fetched with this session are not the next user's to see.
  for (const url of photoURLs.values()) url.then((u) => URL.revokeObjectURL(u), () => {});
  photoURLs.clear();
  forgetArchive();
  closeRoom('Pick a friend to chat with.');
  $('app').hidden = true;
  $('logout').hidden = true;
  $('signin').hidden = false;
  $('me').textContent = '';
}

async function refresh() {
  await Promise.all([loadProfile(), loadFriends(), loadRequests(), loadUnread(), loadFeed(), loadActivities(), loadPlaces(), loadMemories(), loadBlocks()]);
}

// ---- screens ----

function show(name) {
  for (const button of document.querySelectorAll('.tabs button')) {
    if (button.dataset.screen === name) button.setAttribute('aria-current', 'page');
    else button.removeAttribute('aria-current');
  }
  for (const section of document.querySelectorAll('#app .screen')) section.hidden = section.id !== `screen-${name}`;
  if (name === 'chat' && state.openRoom) markOpenRoomRead();
  if (name === 'account') loadSessions();
}
for (const button of document.querySelectorAll('.tabs button')) button.addEventListener('click', () => show(button.dataset.screen));

// ---- friends ----

async function loadFriends() {
  const { friends } = await client.friends();
  state.friends = new Map(friends.map((f) => [f.username, { online: f.online }]));
  for (const friend of friends) learnProfile(friend.username, friend);
  for (const friend of state.friends.keys()) {
    client.subscribe(HuddleClient.chatChannel(state.me, friend));
    client.subscribe(`loc:${friend}`);
  }
  renderFriends();
}

function renderFriends() {
  renderList($('friends'), [...state.friends].map(([name, { online }]) => h('li', {},
    h('span', { class: `grow ${online ? 'online' : 'offline'}` }, person(name), h('span', { class: 'visually-hidden' }, online ? ' (online)' : ' (offline)')),
    h('button', { type: 'button', class: 'quiet', onclick: () => openChat(name) }, `Chat with ${name}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendRemove(name).then(loadFriends, refused) }, `Remove ${name}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => blockUser(name) }, `Block ${name}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => askReport({ kind: 'user', user: name }, `Report ${nameOf(name)}`) }, `Report ${name}`))));
  renderRooms();
  renderClock();
}

async function loadRequests() {
  const { incoming, outgoing } = await client.friendRequests();
  for (const r of [...incoming, ...outgoing]) learnProfile(r.user, r);
  state.requests = { incoming, outgoing };
  renderRequests();
}

function renderRequests() {
  const { incoming, outgoing } = state.requests;
  renderList($('incoming'), incoming.map((r) => h('li', {},
    h('span', { class: 'grow' }, h('strong', {}, person(r.user)), r.message ? ` — ${r.message}` : ''),
    h('button', { type: 'button', onclick: () => client.friendAccept(r.user).then(() => Promise.all([loadRequests(), loadFriends()]), refused) }, `Accept ${r.user}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendDecline(r.user).then(loadRequests, refused) }, `Decline ${r.user}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => blockUser(r.user) }, `Block ${r.user}`))));
  renderList($('outgoing'), outgoing.map((r) => h('li', {},
    h('span', { class: 'grow' }, person(r.user), r.message ? ` — ${r.message}` : ''),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendCancel(r.user).then(loadRequests, refused) }, `Cancel request to ${r.user}`))));
  const badge = $('badge-requests');
  badge.textContent = String(incoming.length);
  badge.hidden = incoming.length === 0;
}

$('search-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  let found;
  try { found = await client.userSearch($('search-input').value.trim().toLowerCase()); } catch (error) { refused(error); return; }
  const names = found.display_names ?? {};
  $('search-results').replaceChildren(...found.users.map((user) => h('li', {},
    h('span', { class: 'grow' }, names[user] ? [names[user], ' ', h('span', { class: 'username' }, `(${user})`)] : user),
    state.friends.has(user) ? h('span', { class: 'muted' }, 'friend') : h('button', {
      type: 'button',
      onclick: async (click) => {
        click.target.disabled = true;
        try {
          await client.friendRequest(user, { message: $('request-message').value });
          click.target.textContent = 'Requested';
          loadRequests();
          loadFriends();
        } catch (error) { click.target.textContent = `Not sent: ${refusal(error)}`; click.target.disabled = false; }
      },
    }, `Ask ${user} to be friends`))));
});

// ---- inbox: friend and match notices ----

client.on('publication', (publication) => {
  const channel = publication.channel;
  if (channel === `inbox:${state.me}`) {
    if (publication.type.startsWith('friend_')) { background(loadRequests()); background(loadFriends()); }
    // A friendship began or ended (unfriended, blocked, the account deleted): their posts join
    // or leave the feed, and an open conversation with them shows what is left of it.
    if (publication.type === 'friend_accepted') background(loadFeed());
    if (publication.type === 'friend_removed') {
      background(loadFeed());
      const other = [publication.data?.user, publication.data?.friend].find((name) => name !== state.me);
      if (state.openRoom?.friend === other) reloadOpenRoom();
    }
    if (publication.type === 'match' || publication.type === 'match_ended') loadMatches();
  } else if (channel.startsWith('chat:')) {
    chatPublication(publication);
  } else if (channel.startsWith('loc:') && publication.type === 'place') {
    state.whereabouts.set(publication.from, publication.data);
    renderClock();
  }
});
client.on('presence', ({ user, online }) => {
  if (!state.friends.has(user)) return;
  state.friends.get(user).online = online;
  renderFriends();
});

// ---- chat ----

const friendOf = (channel) => channel.slice(5).split('~').find((name) => name !== state.me);

async function loadUnread() {
  const { rooms } = await client.unread();
  state.unread = new Map(rooms.map((r) => [r.channel, r.unread]));
  renderRooms();
}

function renderRooms() {
  let total = 0;
  renderList($('rooms'), [...state.friends.keys()].map((friend) => {
    const channel = HuddleClient.chatChannel(state.me, friend);
    const unread = state.unread.get(channel) ?? 0;
    total += unread;
    return h('li', {}, h('button', {
      type: 'button', class: 'quiet grow', 'aria-current': state.openRoom?.channel === channel ? 'true' : null, 'data-key': friend,
      onclick: () => openChat(friend),
    }, avatarOf(friend), nameOf(friend), unread ? h('span', { class: 'badge', 'aria-label': `${unread} unread` }, String(unread)) : ''));
  }));
  $('badge-total').textContent = String(total);
  $('badge-total').hidden = total === 0;
}

async function openChat(friend) {
  const channel = HuddleClient.chatChannel(state.me, friend);
  state.openRoom = { channel, friend, oldest: null };
  show('chat');
  $('chat-with').textContent = `Chat with ${nameOf(friend)}`;
  $('chat-input').disabled = false;
  $('chat-send').disabled = false;
  $('messages').replaceChildren();
  state.rooms.set(channel, new Map());
  await loadOlder();
  renderRooms();
  $('chat-input').focus();
}

async function loadOlder() {
  const room = state.openRoom;
  if (!room) return;
  let page;
  try { page = await client.history(room.channel, { limit: 30, before: room.oldest ?? undefined }); } catch (error) {
    $('older').hidden = true;
    notify(`This conversation cannot be read: ${refusal(error)}`, { error: true });
    return;
  }
  for (const publication of page.publications) addMessage(room.channel, publication);
  room.oldest = page.next_before;
  $('older').hidden = page.next_before === null;
  markOpenRoomRead();
}
$('older').addEventListener('click', loadOlder);

/** Reads the open conversation again from the server after the friendship ended: a block
 * leaves it readable, a deleted account takes it away (then it is closed). */
async function reloadOpenRoom() {
  const room = state.openRoom;
  room.oldest = null;
  state.rooms.set(room.channel, new Map());
  $('messages').replaceChildren();
  await loadOlder();
  if (state.openRoom === room && state.rooms.get(room.channel).size === 0) closeRoom(`Your conversation with ${room.friend} is gone.`);
}

function closeRoom(why) {
  state.openRoom = null;
  $('messages').replaceChildren();
  $('chat-with').textContent = why;
  $('older').hidden = true;
  $('chat-input').disabled = true;
  $('chat-send').disabled = true;
  renderRooms();
}

function chatPublication(publication) {
  const open = state.openRoom?.channel === publication.channel;
  if (open) {
    addMessage(publication.channel, publication);
    if (publication.from !== state.me) markOpenRoomRead();
  } else if (publication.from !== state.me) {
    state.unread.set(publication.channel, (state.unread.get(publication.channel) ?? 0) + 1);
    renderRooms();
  }
  if (publication.from === friendOf(publication.channel)) $('typing').textContent = '';
}

/** Adds a message in offset order, once; a pending one of ours with the same client id becomes it. */
function addMessage(channel, publication) {
  const messages = state.rooms.get(channel);
  if (!messages || messages.has(publication.offset)) return;
  messages.set(publication.offset, publication);
  const pending = publication.client_id && $('messages').querySelector(`li[data-client-id="${CSS.escape(publication.client_id)}"]`);
  if (pending) pending.remove();
  const mine = publication.from === state.me;
  const from = publication.from;
  const item = h('li', { class: mine ? 'mine' : '', 'data-offset': publication.offset },
    h('span', { class: 'who', 'data-user': from ?? undefined }, from ? nameOf(from) : 'server',
      from && !mine ? [' ', h('button', {
        type: 'button', class: 'quiet small', 'aria-label': `Report this message from ${from}`,
        onclick: () => askReport({ kind: 'message', channel, offset: publication.offset }, `Report a message from ${nameOf(from)}: “${textOf(publication.data)}”`),
      }, 'Report')] : ''),
    textOf(publication.data));
  const after = [...$('messages').children].find((li) => li.dataset.offset && Number(li.dataset.offset) > publication.offset);
  $('messages').insertBefore(item, after ?? $('messages').querySelector('li.pending'));
  if (!after) item.scrollIntoView({ block: 'nearest' });
}

const textOf = (data) => (data && typeof data === 'object' && typeof data.text === 'string' ? data.text : JSON.stringify(data));

function markOpenRoomRead() {
  const room = state.openRoom;
  if (!room || $('screen-chat').hidden || document.visibilityState === 'hidden') return;
  const offsets = [...(state.rooms.get(room.channel)?.keys() ?? [])];
  if (offsets.length === 0) return;
  client.markRead(room.channel, Math.max(...offsets)).then((result) => {
    state.unread.set(room.channel, result.unread);
    renderRooms();
  }, () => {});
}

// What is typed stays in the field through reconnects (nothing re-renders it); a sent message
// shows as pending until the server has it: the SDK's outbox sends it after a reconnect.
$('chat-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = $('chat-input');
  const text = input.value.trim();
  const room = state.openRoom;
  if (!text || !room) return;
  const clientId = crypto.randomUUID();
  input.value = '';
  $('messages').append(h('li', { class: 'mine pending', 'data-client-id': clientId }, h('span', { class: 'who' }, 'sending…'), text));
  client.publish(room.channel, { text }, { clientId }).catch((error) => {
    const pending = $('messages').querySelector(`li[data-client-id="${clientId}"]`);
    if (pending) pending.firstChild.textContent = `Not sent: ${refusal(error)}`;
  });
});

let lastTyping = 0;
$('chat-input').addEventListener('input', () => {
  const room = state.openRoom;
  if (!room || Date.now() - lastTyping < 3000 || client.state !== 'ready') return;
  lastTyping = Date.now();
  client.typing(room.channel).catch(() => {});
});
let typingTimer = null;
client.on('typing', ({ channel, user }) => {
  if (state.openRoom?.channel !== channel) return;
  $('typing').textContent = `${user} is typing…`;
  clearTimeout(typingTimer);
  typingTimer = setTimeout(() => { $('typing').textContent = ''; }, 5000);
});

// ---- feed ----

let nextPosts = null;
async function loadFeed(before) {
  const page = await client.feed({ limit: 10, before });
  if (!before) { state.posts.clear(); $('posts').replaceChildren(); }
  for (const post of page.posts) learnFromPost(post);
  for (const post of page.posts) putPost(post);
  nextPosts = page.next_before;
  $('more-posts').hidden = nextPosts === null;
}
$('more-posts').addEventListener('click', () => loadFeed(nextPosts));

function learnFromPost(post) {
  learnProfile(post.author, post, 'author_');
  for (const comment of post.recent_comments) learnProfile(comment.author, comment, 'author_');
}

function putPost(post) {
  state.posts.set(post.id, post);
  const item = h('li', { 'data-post': post.id },
    h('p', { class: 'meta' }, person(post.author), ' · ', new Date(post.time).toLocaleString(), post.activity ? ` · ${post.activity}` : ''),
    h('p', { class: 'text' }, post.text),
    h('div', { class: 'row' },
      h('button', {
        type: 'button', class: 'quiet like', 'aria-pressed': String(post.liked), 'data-key': 'like',
        onclick: () => client.like(post.id, { liked: !post.liked }).then((r) => { post.liked = r.liked; post.likes = r.likes; putPost(post); }, refused),
      }, `${post.liked ? 'Unlike' : 'Like'} (${post.likes})`),
      post.author === state.me
        ? h('button', { type: 'button', class: 'quiet', onclick: () => client.postDelete(post.id).catch(refused) }, 'Delete')
        : h('button', {
          type: 'button', class: 'quiet', 'aria-label': `Report this post by ${post.author}`,
          onclick: () => askReport({ kind: 'post', post: post.id }, `Report a post by ${nameOf(post.author)}: “${post.text}”`),
        }, 'Report')),
    h('ul', { class: 'comments', 'aria-label': 'Comments' }, ...[...post.recent_comments].reverse().map((c) => h('li', { 'data-comment': c.id },
      h('strong', {}, nameOf(c.author)), ' ', c.text,
      c.author === state.me ? '' : [' ', h('button', {
        type: 'button', class: 'quiet small', 'aria-label': `Report this comment by ${c.author}`,
        onclick: () => askReport({ kind: 'comment', post: post.id, comment: c.id }, `Report a comment by ${nameOf(c.author)}: “${c.text}”`),
      }, 'Report')]))),
    h('form', {
      class: 'row',
      onsubmit: (event) => {
        event.preventDefault();
        const input = event.target.elements.comment;
        const text = input.value.trim();
        if (!text) return;
        input.value = '';
        client.comment(post.id, text).catch((error) => { input.value = text; notify(`Comment not sent: ${refusal(error)}`, { error: true }); });
      },
    }, h('label', { class: 'grow' }, 'Comment', h('input', { name: 'comment', maxlength: 500, autocomplete: 'off' })), h('button', { type: 'submit' }, 'Comment')));
  const old = $('posts').querySelector(`li[data-post="${post.id}"]`);
  if (old) {
    const focused = old.contains(document.activeElement) ? controlKey(document.activeElement) : null;
    old.replaceWith(item);
    if (focused !== null) [...item.querySelectorAll('button, input')].find((el) => controlKey(el) === focused)?.focus();
    return;
  }
  const after = [...$('posts').children].find((li) => Number(li.dataset.post) < post.id);
  $('posts').insertBefore(item, after ?? null);
}

client.on('post', ({ post }) => { learnFromPost(post); putPost(post); });
client.on('like', ({ post: id, likes, liked, user }) => {
  const post = state.posts.get(id);
  if (!post) return;
  post.likes = likes;
  if (user === state.me) post.liked = liked;
  putPost(post);
});
client.on('comment', ({ post: id, comment, comments }) => {
  const post = state.posts.get(id);
  if (!post) return;
  post.comments = comments;
  learnProfile(comment.author, comment, 'author_');
  post.recent_comments = [comment, ...post.recent_comments.filter((c) => c.id !== comment.id)].slice(0, 5);
  putPost(post);
});
client.on('comment_removed', ({ post: id, comment, comments }) => {
  const post = state.posts.get(id);
  if (!post) return;
  post.comments = comments;
  post.recent_comments = post.recent_comments.filter((c) => c.id !== comment);
  putPost(post);
});
client.on('publication_removed', ({ channel, offset }) => {
  state.rooms.get(channel)?.delete(offset);
  if (state.openRoom?.channel === channel) $('messages').querySelector(`li[data-offset="${offset}"]`)?.remove();
});
client.on('post_deleted', ({ post: id }) => {
  state.posts.delete(id);
  $('posts').querySelector(`li[data-post="${id}"]`)?.remove();
});
$('post-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('post-input');
  const text = input.value.trim();
  const activity = $('post-activity').value || undefined;
  if (!text) return;
  input.value = '';
  try { putPost((await client.post(text, { activity })).post); } catch (error) { input.value = text; notify(`Not posted: ${refusal(error)}`, { error: true }); }
});

// ---- activities and matches ----

async function loadActivities() {
  const { available, mine } = await client.activities();
  state.activities = available;
  const on = new Set(mine.map((s) => s.activity));
  renderList($('toggles'), available.map((activity) => h('label', {},
    h('input', {
      type: 'checkbox', name: 'activity', value: activity, checked: on.has(activity), 'data-key': activity,
      onchange: (event) => (event.target.checked ? client.activityOn(activity) : client.activityOff(activity)).then(loadMatches, () => loadActivities()),
    }), activity)));
  $('post-activity').replaceChildren(h('option', { value: '' }, 'none'), ...available.map((a) => h('option', { value: a }, a)));
  await loadMatches();
}

async function loadMatches() {
  const { matches } = await client.matches();
  renderList($('matches'), matches.map((m) => h('li', { 'data-user': m.user, 'data-activity': m.activity }, `${m.user} is up for ${m.activity} too`)));
}

// ---- places and the clock ----

async function loadPlaces() {
  const { places } = await client.places();
  renderList($('places'), places.map((p) => h('li', {},
    h('span', { class: 'grow' }, `${p.label} (${p.lat.toFixed(4)}, ${p.lon.toFixed(4)}, ${Math.round(p.radius)} m)`),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.placeRemove(p.id).then(loadPlaces) }, `Remove ${p.label}`))));
}
$('place-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const v = formValues(event.target);
  await client.placeSet({ label: v.label, lat: Number(v.lat), lon: Number(v.lon), radius: Number(v.radius) });
  event.target.reset();
  loadPlaces();
});
$('fix-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const v = formValues(event.target);
  const decision = await client.locationFix({ lat: Number(v.lat), lon: Number(v.lon), accuracy: Number(v.accuracy) });
  $('my-place').textContent = `You are at: ${decision.place}`;
});
client.on('whereabouts', ({ user, place, since }) => { state.whereabouts.set(user, { place, since }); renderClock(); });

/** The dial: unknown and traveling, then every place a friend has been at, by name (a place
 * keeps its spot once seen, so a hand moves between fixed marks); a hand per friend. */
const dialPlaces = new Set();
function renderClock() {
  for (const { place } of state.whereabouts.values()) if (place !== 'unknown' && place !== 'traveling') dialPlaces.add(place);
  const labels = ['unknown', 'traveling', ...[...dialPlaces].sort()];
  const angle = (label) => (360 / labels.length) * labels.indexOf(label);
  $('clock-labels').replaceChildren(...labels.map((label) => {
    const radians = (angle(label) - 90) * Math.PI / 180;
    return h('text', { x: (Math.cos(radians) * 92).toFixed(1), y: (Math.sin(radians) * 92 + 3).toFixed(1), 'text-anchor': 'middle' }, label);
  }));
  const friends = [...state.friends.keys()].filter((f) => state.whereabouts.has(f));
  $('clock-hands').replaceChildren(...friends.map((friend, index) => {
    const place = state.whereabouts.get(friend).place;
    const length = 70 - index * 8;
    return h('g', { class: 'hand', 'data-friend': friend, 'data-place': place, transform: `rotate(${angle(place)})` },
      h('line', { x1: 0, y1: 0, x2: 0, y2: -length }),
      h('text', { x: 0, y: -length - 3, 'text-anchor': 'middle' }, friend));
  }));
  $('whereabouts').replaceChildren(...friends.map((friend) => {
    const w = state.whereabouts.get(friend);
    return h('li', { 'data-friend': friend }, `${friend}: ${w.place}`, w.since ? ` since ${new Date(w.since).toLocaleTimeString()}` : '');
  }));
}

// ---- memories ----

async function loadMemories() {
  const { memories } = await client.memories();
  state.memories = new Map(memories.map((m) => [m.id, m]));
  renderList($('memories'), memories.map((m) => h('li', {},
    h('span', { class: 'grow' }, h('strong', {}, m.title), ` · ${m.date}`, m.place_name ? ` · ${m.place_name}` : '', ` · ${m.point_count} points`),
    h('button', { type: 'button', class: 'quiet', onclick: () => openMemory(m.id) }, `Open ${m.title}`))));
}
$('memory-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const v = formValues(event.target);
  const { memory } = await client.memoryCreate({ title: v.title, date: v.date, placeName: v.place_name });
  event.target.reset();
  await loadMemories();
  openMemory(memory.id);
});

const photoURLs = new Map();
async function photoURL(hash) {
  if (!photoURLs.has(hash)) photoURLs.set(hash, client.photo(hash).then((blob) => URL.createObjectURL(blob)));
  return photoURLs.get(hash);
}

async function openMemory(id) {
  const { memory } = await client.memory(id);
  state.openMemory = id;
  $('memory-detail').hidden = false;
  $('memory-title').textContent = `${memory.title} (${memory.date})`;
  $('points').replaceChildren(...memory.points.map((p) => {
    const item = h('li', {}, h('span', { class: 'grow' }, new Date(p.time).toLocaleString(), p.note ? ` — ${p.note}` : ''));
    for (const hash of p.photos) {
      const img = h('img', { alt: `Photo of ${memory.title}` });
      photoURL(hash).then((url) => { img.src = url; }, () => {});
      item.append(img);
    }
    return item;
  }));
}
$('point-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const file = form.elements.photo.files[0];
  const photos = file ? [(await client.uploadPhoto(file)).hash] : [];
  await client.pointAdd(state.openMemory, { time: Date.now(), note: form.elements.note.value, photos });
  form.reset();
  openMemory(state.openMemory);
});
client.on('memory_changed', () => { loadMemories(); });

// ---- account: profile ----

async function loadProfile() {
  const profile = await client.profile();
  state.profiles.set(profile.username, { display_name: profile.display_name, avatar: profile.avatar });
  renderMe();
}

function renderMe() {
  if (!state.me) return;
  $('me').replaceChildren(person(state.me));
  $('my-avatar').replaceChildren(avatarOf(state.me));
  $('my-name').textContent = nameOf(state.me);
  const field = $('profile-form').elements.display_name;
  if (document.activeElement !== field) field.value = displayName(state.me) ?? '';
}

$('profile-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const status = $('profile-status');
  status.className = 'muted';
  status.textContent = 'Saving…';
  try {
    const file = form.elements.avatar.files[0];
    const avatar = file ? (await client.uploadPhoto(file)).hash : undefined;
    const profile = await client.profileSet({ displayName: form.elements.display_name.value.trim(), avatar });
    state.profiles.set(profile.username, { display_name: profile.display_name, avatar: profile.avatar });
    form.elements.avatar.value = '';
    renderMe();
    status.textContent = 'Profile saved: your friends see it now.';
  } catch (error) {
    status.className = 'error';
    status.textContent = `Not saved: ${refusal(error)}`;
  }
});

// ---- account: sessions and password ----

async function loadSessions() {
  let sessions;
  try { ({ sessions } = await client.sessions()); } catch (error) { $('sessions-status').textContent = refusal(error); return; }
  renderList($('sessions'), sessions.map((s) => h('li', { 'data-session': s.id, 'data-current': s.current ? 'true' : undefined },
    h('span', { class: 'grow' }, h('strong', {}, s.device ?? 'Unnamed device'), s.current ? ' · this browser' : s.connected ? ' · connected now' : '',
      h('br'), h('span', { class: 'muted' }, `signed in ${new Date(s.created_at).toLocaleString()}, last seen ${new Date(s.last_seen_at).toLocaleString()}`)),
    s.current ? '' : h('button', {
      type: 'button', class: 'quiet', 'aria-label': `Sign out ${s.device ?? 'the unnamed device'} (session ${s.id})`,
      onclick: () => revokeSession(s),
    }, 'Sign out'))));
}

async function revokeSession(session) {
  const status = $('sessions-status');
  try {
    await client.sessionRevoke(session.id);
    status.className = 'muted';
    status.textContent = `${session.device ?? 'That device'} is signed out.`;
  } catch (error) {
    status.className = 'error';
    status.textContent = refusal(error);
  }
  loadSessions();
}

$('password-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const status = $('sessions-status');
  try {
    const { revoked } = await client.passwordChange(form.elements.old_password.value, form.elements.new_password.value,
      { revokeOthers: form.elements.revoke_others.checked });
    form.reset();
    status.className = 'muted';
    status.textContent = `Password changed${revoked ? `; ${revoked} other session${revoked === 1 ? '' : 's'} signed out` : ''}.`;
  } catch (error) {
    status.className = 'error';
    status.textContent = `Password not changed: ${refusal(error)}`;
  }
  loadSessions();
});

// ---- blocking and reports ----

async function loadBlocks() {
  ({ users: state.blocks } = await client.blocks());
  renderList($('blocks'), state.blocks.map((user) => h('li', { 'data-user': user },
    h('span', { class: 'grow' }, user),
    h('button', { type: 'button', class: 'quiet', onclick: () => unblockUser(user) }, `Unblock ${user}`))));
}

/** Blocking ends the friendship and any request: the lists and the feed are read again. */
async function blockUser(user) {
  try {
    await client.block(user);
    notify(`You blocked ${user}: neither of you sees the other any more. Unblock them in Account.`);
  } catch (error) {
    notify(`${user} not blocked: ${refusal(error)}`, { error: true });
  }
  await Promise.all([loadBlocks(), loadFriends(), loadRequests(), loadFeed()]);
}

async function unblockUser(user) {
  try {
    await client.unblock(user);
    notify(`You unblocked ${user}. Ask them again to be friends if you wish.`);
  } catch (error) {
    refused(error);
  }
  loadBlocks();
}

let reportTarget = null;
function askReport(target, what) {
  reportTarget = target;
  const form = $('report-form');
  form.reset();
  $('report-what').textContent = what;
  $('report-error').textContent = '';
  $('report-dialog').showModal();
}
$('report-cancel').addEventListener('click', () => $('report-dialog').close());
$('report-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  try {
    await client.report(reportTarget, form.elements.reason.value, { text: form.elements.text.value.trim() || undefined });
    $('report-dialog').close();
    notify('Thank you: your report went to the moderators.');
  } catch (error) {
    $('report-error').textContent = `Not reported: ${refusal(error)}`;
  }
});

// ---- account: download my data ----

/** The last archive's Blob URL: kept until the next download or sign-out, since the browser
 * may still be saving from it after the click. */
let archiveURL = null;
function forgetArchive() {
  if (archiveURL) URL.revokeObjectURL(archiveURL);
  archiveURL = null;
  const status = $('export-status');
  status.textContent = '';
  delete status.dataset.state;
  delete status.dataset.size;
  $('export-progress').hidden = true;
}

const kilobytes = (bytes) => `${Math.max(1, Math.round(bytes / 1024)).toLocaleString()} KB`;

$('export-download').addEventListener('click', async () => {
  const button = $('export-download');
  const status = $('export-status');
  const bar = $('export-progress');
  forgetArchive();
  button.disabled = true;
  status.className = 'muted';
  status.dataset.state = 'downloading';
  status.textContent = 'Preparing your data…';
  bar.hidden = false;
  bar.removeAttribute('value'); // indeterminate until the first bytes
  try {
    const archive = await client.exportArchive({
      onProgress: ({ received, total }) => {
        if (!total) { status.textContent = `Downloading your data… ${kilobytes(received)}`; return; }
        bar.value = received / total;
        status.textContent = `Downloading your data… ${kilobytes(received)} of ${kilobytes(total)} (${Math.floor((100 * received) / total)}%)`;
      },
    });
    archiveURL = URL.createObjectURL(archive.blob);
    h('a', { href: archiveURL, download: archive.filename }).click();
    bar.value = 1;
    status.dataset.state = 'done';
    status.dataset.size = String(archive.blob.size);
    status.textContent = `Saved ${archive.filename} (${kilobytes(archive.size)}): export.json and your photos.`;
  } catch (error) {
    bar.hidden = true;
    status.className = 'error';
    status.dataset.state = 'refused';
    status.textContent = `Not downloaded: ${refusal(error)}`;
  } finally {
    button.disabled = false;
  }
});

// ---- account: deletion ----

$('delete-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  $('delete-error').textContent = '';
  try {
    await client.accountDelete({ password: form.elements.password.value });
  } catch (error) {
    $('delete-error').textContent = `${refusal(error)} Your account was not deleted.`;
    return;
  }
  form.reset();
  leave();
  $('signin-notice').textContent = 'Your account and everything in it were deleted.';
});

client.start();
