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
};

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
  else if (user && resumed) refresh(); // live-only events (feed, presence) were missed
  wasConnected = true;
});
client.on('state', ({ state: s }) => {
  if ((s === 'waiting' || s === 'connecting') && wasConnected) showConnection('Reconnecting…', 'reconnecting');
});
client.on('stopped', (reason) => {
  showConnection('Signed out', 'reconnecting');
  if (reason.reason === 'authentication_failed') leave();
});

// ---- signing in ----

function formValues(form) { return Object.fromEntries(new FormData(form).entries()); }

async function signIn(action) {
  $('signin-error').textContent = '';
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
  $('me').textContent = user.username;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('logout').hidden = false;
  show('chat');
  client.subscribe(`inbox:${user.username}`);
  refresh();
}

function leave() {
  state.me = null;
  $('app').hidden = true;
  $('logout').hidden = true;
  $('signin').hidden = false;
  $('me').textContent = '';
}

async function refresh() {
  await Promise.all([loadFriends(), loadRequests(), loadUnread(), loadFeed(), loadActivities(), loadPlaces(), loadMemories()]);
}

// ---- screens ----

function show(name) {
  for (const button of document.querySelectorAll('.tabs button')) {
    if (button.dataset.screen === name) button.setAttribute('aria-current', 'page');
    else button.removeAttribute('aria-current');
  }
  for (const section of document.querySelectorAll('#app .screen')) section.hidden = section.id !== `screen-${name}`;
  if (name === 'chat' && state.openRoom) markOpenRoomRead();
}
for (const button of document.querySelectorAll('.tabs button')) button.addEventListener('click', () => show(button.dataset.screen));

// ---- friends ----

async function loadFriends() {
  const { friends } = await client.friends();
  state.friends = new Map(friends.map((f) => [f.username, { online: f.online }]));
  for (const friend of state.friends.keys()) {
    client.subscribe(HuddleClient.chatChannel(state.me, friend));
    client.subscribe(`loc:${friend}`);
  }
  renderFriends();
}

function renderFriends() {
  $('friends').replaceChildren(...[...state.friends].map(([name, { online }]) => h('li', {},
    h('span', { class: `grow ${online ? 'online' : 'offline'}` }, name, h('span', { class: 'visually-hidden' }, online ? ' (online)' : ' (offline)')),
    h('button', { type: 'button', class: 'quiet', onclick: () => openChat(name) }, `Chat with ${name}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendRemove(name).then(loadFriends) }, `Remove ${name}`))));
  renderRooms();
  renderClock();
}

async function loadRequests() {
  const { incoming, outgoing } = await client.friendRequests();
  $('incoming').replaceChildren(...incoming.map((r) => h('li', {},
    h('span', { class: 'grow' }, h('strong', {}, r.user), r.message ? ` — ${r.message}` : ''),
    h('button', { type: 'button', onclick: () => client.friendAccept(r.user).then(() => Promise.all([loadRequests(), loadFriends()])) }, `Accept ${r.user}`),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendDecline(r.user).then(loadRequests) }, `Decline ${r.user}`))));
  $('outgoing').replaceChildren(...outgoing.map((r) => h('li', {},
    h('span', { class: 'grow' }, r.user, r.message ? ` — ${r.message}` : ''),
    h('button', { type: 'button', class: 'quiet', onclick: () => client.friendCancel(r.user).then(loadRequests) }, `Cancel request to ${r.user}`))));
  const badge = $('badge-requests');
  badge.textContent = String(incoming.length);
  badge.hidden = incoming.length === 0;
}

$('search-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const { users } = await client.userSearch($('search-input').value.trim().toLowerCase());
  $('search-results').replaceChildren(...users.map((user) => h('li', {},
    h('span', { class: 'grow' }, user),
    state.friends.has(user) ? h('span', { class: 'muted' }, 'friend') : h('button', {
      type: 'button',
      onclick: async (click) => {
        click.target.disabled = true;
        try {
          await client.friendRequest(user, { message: $('request-message').value });
          click.target.textContent = 'Requested';
          loadRequests();
          loadFriends();
        } catch (error) { click.target.textContent = error.code; click.target.disabled = false; }
      },
    }, `Ask ${user} to be friends`))));
});

// ---- inbox: friend and match notices ----

client.on('publication', (publication) => {
  const channel = publication.channel;
  if (channel === `inbox:${state.me}`) {
    if (publication.type.startsWith('friend_')) { loadRequests(); loadFriends(); }
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
  $('rooms').replaceChildren(...[...state.friends.keys()].map((friend) => {
    const channel = HuddleClient.chatChannel(state.me, friend);
    const unread = state.unread.get(channel) ?? 0;
    total += unread;
    return h('li', {}, h('button', {
      type: 'button', class: 'quiet grow', 'aria-current': state.openRoom?.channel === channel ? 'true' : null,
      onclick: () => openChat(friend),
    }, friend, unread ? h('span', { class: 'badge', 'aria-label': `${unread} unread` }, String(unread)) : ''));
  }));
  $('badge-total').textContent = String(total);
  $('badge-total').hidden = total === 0;
}

async function openChat(friend) {
  const channel = HuddleClient.chatChannel(state.me, friend);
  state.openRoom = { channel, friend, oldest: null };
  show('chat');
  $('chat-with').textContent = `Chat with ${friend}`;
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
  const page = await client.history(room.channel, { limit: 30, before: room.oldest ?? undefined });
  for (const publication of page.publications) addMessage(room.channel, publication);
  room.oldest = page.next_before;
  $('older').hidden = page.next_before === null;
  markOpenRoomRead();
}
$('older').addEventListener('click', loadOlder);

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
  const item = h('li', { class: mine ? 'mine' : '', 'data-offset': publication.offset },
    h('span', { class: 'who' }, publication.from ?? 'server'), textOf(publication.data));
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
    if (pending) pending.firstChild.textContent = `not sent: ${error.code}`;
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
  for (const post of page.posts) putPost(post);
  nextPosts = page.next_before;
  $('more-posts').hidden = nextPosts === null;
}
$('more-posts').addEventListener('click', () => loadFeed(nextPosts));

function putPost(post) {
  state.posts.set(post.id, post);
  const item = h('li', { 'data-post': post.id },
    h('p', { class: 'meta' }, post.author, ' · ', new Date(post.time).toLocaleString(), post.activity ? ` · ${post.activity}` : ''),
    h('p', { class: 'text' }, post.text),
    h('div', { class: 'row' },
      h('button', {
        type: 'button', class: 'quiet like', 'aria-pressed': String(post.liked),
        onclick: () => client.like(post.id, { liked: !post.liked }).then((r) => { post.liked = r.liked; post.likes = r.likes; putPost(post); }, () => {}),
      }, `${post.liked ? 'Unlike' : 'Like'} (${post.likes})`),
      post.author === state.me ? h('button', { type: 'button', class: 'quiet', onclick: () => client.postDelete(post.id).catch(() => {}) }, 'Delete') : ''),
    h('ul', { class: 'comments', 'aria-label': 'Comments' }, ...[...post.recent_comments].reverse().map((c) => h('li', {}, h('strong', {}, c.author), ' ', c.text))),
    h('form', {
      class: 'row',
      onsubmit: (event) => {
        event.preventDefault();
        const input = event.target.elements.comment;
        const text = input.value.trim();
        if (!text) return;
        input.value = '';
        client.comment(post.id, text).catch(() => { input.value = text; });
      },
    }, h('label', { class: 'grow' }, 'Comment', h('input', { name: 'comment', maxlength: 500, autocomplete: 'off' })), h('button', { type: 'submit' }, 'Comment')));
  const old = $('posts').querySelector(`li[data-post="${post.id}"]`);
  if (old) { old.replaceWith(item); return; }
  const after = [...$('posts').children].find((li) => Number(li.dataset.post) < post.id);
  $('posts').insertBefore(item, after ?? null);
}

client.on('post', ({ post }) => putPost(post));
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
  post.recent_comments = [comment, ...post.recent_comments.filter((c) => c.id !== comment.id)].slice(0, 5);
  putPost(post);
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
  try { putPost((await client.post(text, { activity })).post); } catch { input.value = text; }
});

// ---- activities and matches ----

async function loadActivities() {
  const { available, mine } = await client.activities();
  state.activities = available;
  const on = new Set(mine.map((s) => s.activity));
  $('toggles').replaceChildren(...available.map((activity) => h('label', {},
    h('input', {
      type: 'checkbox', name: 'activity', value: activity, checked: on.has(activity),
      onchange: (event) => (event.target.checked ? client.activityOn(activity) : client.activityOff(activity)).then(loadMatches, () => loadActivities()),
    }), activity)));
  $('post-activity').replaceChildren(h('option', { value: '' }, 'none'), ...available.map((a) => h('option', { value: a }, a)));
  await loadMatches();
}

async function loadMatches() {
  const { matches } = await client.matches();
  $('matches').replaceChildren(...matches.map((m) => h('li', { 'data-user': m.user, 'data-activity': m.activity }, `${m.user} is up for ${m.activity} too`)));
}

// ---- places and the clock ----

async function loadPlaces() {
  const { places } = await client.places();
  $('places').replaceChildren(...places.map((p) => h('li', {},
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
  $('memories').replaceChildren(...memories.map((m) => h('li', {},
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

client.start();
