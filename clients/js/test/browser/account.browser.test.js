// The web app's account features in headless Chromium against the real server, three browser
// contexts: alice sets a display name and an avatar and bob, her friend, sees both live in his
// friends, chat and feed; bob reports alice's message and post (the operator lists both) and
// blocks her (her posts and their chat leave his screens, each side's message is refused in
// words), then unblocks her; alice signs out her second browser from the sessions screen (it
// is back at sign-in: close 4001); carol befriends alice, alice deletes her account (a wrong
// password first: refused, shown) and carol's friends, feed and chat lose her live. Every wait
// is on the page's DOM. Then dave downloads his data from the account screen: Chromium saves
// the archive (its download event), and a second download at once is refused in words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chromium } from './chromium.js';
import { OwnServer, uniqueName } from '../support.js';
import { shots, submit, click, clickText, screen, shot } from './app-driver.js';

const API_KEY = 'browser-test-api-key-0123456789';
const PASSWORD = 'correct horse battery';

let browser;
let server;
let alice; // a phone: 390 px
let bob; // a desktop
let other; // alice's second browser, then carol's
let names;

before(async () => {
  server = await OwnServer.start(['--api-key', API_KEY]);
  browser = await Chromium.launch();
  alice = await browser.newPage({ width: 390, height: 844, mobile: true });
  bob = await browser.newPage({ width: 1280, height: 900 });
  other = await browser.newPage({ width: 1024, height: 800 });
  names = { alice: uniqueName('alice'), bob: uniqueName('bob'), carol: uniqueName('carol') };
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

const text = (page, selector) => page.eval(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`);

async function signUp(page, name) {
  await page.goto(`http://127.0.0.1:${server.port}/app/`);
  await page.waitFor(`document.querySelector('#connection').textContent === 'Connected'`, `${name}'s page connected`);
  await submit(page, '#signup-form', { username: name, email: `${name}@example.com`, password: PASSWORD });
  await page.waitFor(`!document.querySelector('#app').hidden`, `${name} signed in`);
}

/** `asker` finds `friend` by name and asks; `friend` accepts in their browser. */
async function befriend(asker, askerName, friend, friendName) {
  await screen(asker, 'friends');
  await submit(asker, '#search-form', { prefix: friendName, message: '' });
  await asker.waitFor(`[...document.querySelectorAll('#search-results button')].some((b) => b.textContent === 'Ask ${friendName} to be friends')`, 'the search result');
  await clickText(asker, `Ask ${friendName} to be friends`);
  await screen(friend, 'friends');
  await friend.waitFor(`[...document.querySelectorAll('#incoming button')].some((b) => b.textContent === 'Accept ${askerName}')`, 'the request');
  await clickText(friend, `Accept ${askerName}`);
  await asker.waitFor(`document.querySelector('#friends').textContent.includes('${friendName}')`, `${friendName} in ${askerName}'s friends`);
  await friend.waitFor(`document.querySelector('#friends').textContent.includes('${askerName}')`, `${askerName} in ${friendName}'s friends`);
}

async function post(page, words) {
  await screen(page, 'feed');
  await submit(page, '#post-form', { text: words, activity: '' });
  await page.waitFor(`[...document.querySelectorAll('#posts .text')].some((p) => p.textContent === ${JSON.stringify(words)})`, `the post "${words}"`);
}
const feedHas = (words) => `[...document.querySelectorAll('#posts .text')].some((p) => p.textContent === ${JSON.stringify(words)})`;

async function chat(page, friend, words) {
  await screen(page, 'friends');
  await clickText(page, `Chat with ${friend}`);
  await submit(page, '#chat-form', { text: words });
}
const roomHas = (friend) => `[...document.querySelectorAll('#rooms button')].some((b) => b.textContent.includes('${friend}'))`;

async function reports() {
  const response = await fetch(`http://127.0.0.1:${server.port}/api/v1/reports`, { headers: { Authorization: `Bearer ${API_KEY}` } });
  assert.equal(response.status, 200);
  return (await response.json()).reports;
}

test('profile, report, block, sessions and account deletion, as three people in three browsers', async () => {
  await signUp(alice, names.alice);
  await signUp(bob, names.bob);
  await befriend(alice, names.alice, bob, names.bob);
  await post(alice, 'alice was here');
  await post(bob, 'bob was here');
  await bob.waitFor(feedHas('alice was here'), 'alice\'s post at bob');
  await chat(bob, names.alice, 'hi alice');
  await alice.waitFor(roomHas(names.bob), 'the room at alice');

  // Profile: a refused display name is explained; then a name and an avatar, which bob's
  // friends list, open chat and feed show without a reload.
  await screen(alice, 'account');
  await submit(alice, '#profile-form', { display_name: 'Al\u202Eice' });
  await alice.waitFor(`document.querySelector('#profile-status').textContent.startsWith('Not saved: ')`, 'the refused name');
  assert.match(await text(alice, '#profile-status'), /Not saved: .+/);
  assert.equal(await alice.eval(`document.querySelector('#profile-status').className`), 'error');
  const png = join(shots, 'avatar.png');
  writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64'));
  await alice.send('DOM.enable');
  await alice.setFile('#profile-form input[name="avatar"]', png);
  await submit(alice, '#profile-form', { display_name: 'Alice 🌷' });
  await alice.waitFor(`document.querySelector('#profile-status').textContent === 'Profile saved: your friends see it now.'`, 'the profile saved');
  await alice.waitFor(`document.querySelector('#my-avatar img')?.naturalWidth === 2`, 'alice\'s own avatar');
  const shown = (where) => `document.querySelector('${where} .person[data-user="${names.alice}"]')?.textContent === 'Alice 🌷 (${names.alice})'`;
  await bob.waitFor(shown('#friends'), 'the display name in bob\'s friends');
  await bob.waitFor(`document.querySelector('#friends .person[data-user="${names.alice}"] img.avatar')?.naturalWidth === 2`, 'the avatar in bob\'s friends');
  await bob.waitFor(shown('#posts'), 'the display name on alice\'s post at bob');
  await bob.waitFor(`document.querySelector('#chat-with').textContent === 'Chat with Alice 🌷 (${names.alice})'`, 'the name in bob\'s open chat');
  await bob.waitFor(`[...document.querySelectorAll('#rooms button')].some((b) => b.textContent.includes('Alice 🌷'))`, 'the name in bob\'s rooms');
  await chat(alice, names.bob, 'hello bob');
  await bob.waitFor(`[...document.querySelectorAll('#messages .who[data-user="${names.alice}"]')].some((w) => w.firstChild.textContent === 'Alice 🌷 (${names.alice})')`, 'the name on her message');
  await shot(bob, '30-profile-at-friend-desktop');
  await shot(alice, '31-account-phone');

  // Report: bob reports alice's message and her post; the operator lists both; a second report
  // of the post is refused in words.
  await bob.eval(`[...document.querySelectorAll('#messages li')].find((li) => li.lastChild.textContent === 'hello bob').querySelector('button[aria-label^="Report this message"]').click(); true`);
  await bob.waitFor(`document.querySelector('#report-dialog').open`, 'the report dialog for the message');
  await submit(bob, '#report-form', { reason: 'harassment', text: '' });
  await bob.waitFor(`!document.querySelector('#report-dialog').open && document.querySelector('#notice').textContent === 'Thank you: your report went to the moderators.'`, 'the message report thanked');
  const [messageReport] = (await reports()).filter((r) => r.reporter === names.bob);
  assert.deepEqual([messageReport.kind, messageReport.user, messageReport.reason, messageReport.content], ['message', names.alice, 'harassment', '{"text":"hello bob"}']);
  await screen(bob, 'feed');
  const reportPost = `[...document.querySelectorAll('#posts li[data-post]')].find((li) => li.querySelector('.text').textContent === 'alice was here').querySelector('button[aria-label^="Report this post"]').click()`;
  await bob.eval(`${reportPost}; true`);
  await bob.waitFor(`document.querySelector('#report-dialog').open`, 'the report dialog');
  await shot(bob, '32-report-desktop');
  await submit(bob, '#report-form', { reason: 'spam', text: 'ads again' });
  await bob.waitFor(`!document.querySelector('#report-dialog').open && document.querySelector('#notice').textContent === 'Thank you: your report went to the moderators.'`, 'the report thanked');
  const [report] = (await reports()).filter((r) => r.reporter === names.bob && r.kind === 'post');
  assert.equal(report.kind, 'post');
  assert.equal(report.user, names.alice);
  assert.equal(report.reason, 'spam');
  assert.equal(report.content, 'alice was here');
  await bob.eval(`${reportPost}; true`);
  await submit(bob, '#report-form', { reason: 'spam', text: '' });
  await bob.waitFor(`document.querySelector('#report-error').textContent === 'Not reported: You already reported this; the moderators have it.'`, 'the second report refused');
  await click(bob, '#report-cancel');

  // Sessions: alice signs in on a second browser, then signs it out from her phone.
  await other.goto(`http://127.0.0.1:${server.port}/app/`);
  await other.waitFor(`document.querySelector('#connection').textContent === 'Connected'`, 'the second browser connected');
  await submit(other, '#login-form', { login: names.alice, password: PASSWORD });
  await other.waitFor(`!document.querySelector('#app').hidden`, 'alice signed in twice');
  await screen(alice, 'account');
  await alice.waitFor(`document.querySelectorAll('#sessions li').length === 2 && document.querySelectorAll('#sessions li[data-current]').length === 1`, 'two sessions');
  await shot(alice, '33-sessions-phone');
  await click(alice, '#sessions li:not([data-current]) button');
  await other.waitFor(`document.querySelector('#app').hidden && !document.querySelector('#signin').hidden`, 'the second browser signed out');
  assert.equal(await text(other, '#signin-notice'), 'This browser was signed out (from another device, or by a password change). Sign in again to continue.');
  await alice.waitFor(`document.querySelectorAll('#sessions li').length === 1 && document.querySelector('#sessions-status').textContent === 'web is signed out.'`, 'one session left');
  await shot(other, '34-signed-out-desktop');

  // Block: bob blocks alice; her post and their room leave bob's screens, his leave hers, and
  // what either writes in the conversation still open is refused in words.
  await screen(bob, 'friends');
  await clickText(bob, `Block ${names.alice}`);
  await bob.waitFor(`document.querySelector('#notice').textContent.startsWith('You blocked ${names.alice}')`, 'the block confirmed');
  await bob.waitFor(`!document.querySelector('#friends').textContent.includes('${names.alice}')`, 'alice out of bob\'s friends');
  await bob.waitFor(`!(${roomHas(names.alice)}) && !(${feedHas('alice was here')}) && ${feedHas('bob was here')}`, 'her post and room gone at bob');
  await alice.waitFor(`!(${roomHas(names.bob)}) && !(${feedHas('bob was here')})`, 'his post and room gone at alice');
  await screen(alice, 'chat');
  await submit(alice, '#chat-form', { text: 'are you there?' });
  await alice.waitFor(`document.querySelector('#messages li.pending .who')?.textContent === 'Not sent: You are not friends (any more), so this was not sent.'`, 'alice\'s message refused');
  await submit(bob, '#chat-form', { text: 'bye' });
  await bob.waitFor(`document.querySelector('#messages li.pending .who')?.textContent === 'Not sent: You are not friends (any more), so this was not sent.'`, 'bob\'s message refused');
  await screen(bob, 'account');
  await bob.waitFor(`document.querySelector('#blocks li[data-user="${names.alice}"]')`, 'alice in bob\'s blocked list');
  await shot(bob, '35-blocked-desktop');
  await clickText(bob, `Unblock ${names.alice}`);
  await bob.waitFor(`!document.querySelector('#blocks li') && document.querySelector('#notice').textContent.startsWith('You unblocked ${names.alice}')`, 'alice unblocked');
  assert.ok(!(await bob.eval(`document.querySelector('#friends').textContent.includes('${names.alice}')`)), 'an unblock restores no friendship');
  await shot(alice, '36-refused-phone');

  // Deletion: carol (in the second browser) befriends alice and chats; alice deletes her
  // account, a wrong password first; carol's screens lose her without a reload.
  await submit(other, '#signup-form', { username: names.carol, email: `${names.carol}@example.com`, password: PASSWORD });
  await other.waitFor(`!document.querySelector('#app').hidden`, 'carol signed in');
  await befriend(other, names.carol, alice, names.alice);
  await screen(other, 'feed');
  await other.waitFor(feedHas('alice was here'), 'alice\'s post at carol');
  await chat(alice, names.carol, 'bye carol');
  await chat(other, names.alice, 'see you');
  await other.waitFor(`document.querySelector('#messages').textContent.includes('bye carol')`, 'alice\'s message at carol');
  await screen(alice, 'account');
  await submit(alice, '#delete-form', { password: 'not my password' });
  await alice.waitFor(`document.querySelector('#delete-error').textContent === 'Wrong password. Your account was not deleted.'`, 'the wrong password refused');
  assert.equal(await alice.eval(`document.querySelector('#app').hidden`), false);
  await shot(alice, '37-delete-refused-phone');
  await submit(alice, '#delete-form', { password: PASSWORD });
  await alice.waitFor(`!document.querySelector('#signin').hidden && document.querySelector('#signin-notice').textContent === 'Your account and everything in it were deleted.'`, 'alice deleted');
  await other.waitFor(`!document.querySelector('#friends').textContent.includes('${names.alice}')`, 'alice out of carol\'s friends');
  await other.waitFor(`!(${roomHas(names.alice)}) && !(${feedHas('alice was here')})`, 'her room and post gone at carol');
  await other.waitFor(`document.querySelector('#chat-with').textContent === 'Your conversation with ${names.alice} is gone.'`, 'the conversation gone at carol');
  assert.equal(await other.eval(`document.querySelectorAll('#messages li').length`), 0);
  assert.equal(await other.eval(`document.querySelector('#chat-input').disabled`), true);
  await shot(other, '38-friend-deleted-desktop');
  await submit(alice, '#login-form', { login: names.alice, password: PASSWORD });
  await alice.waitFor(`document.querySelector('#signin-error').textContent.includes('invalid_credentials')`, 'the deleted account cannot log in');

  for (const page of [alice, bob, other]) {
    assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION|WebSocket|Failed to load resource/.test(e)), []);
  }
});

test('download my data: the archive is saved with its progress shown, a second one at once is refused with the wait', async () => {
  const dave = await browser.newPage({ width: 1024, height: 800 });
  const name = uniqueName('dave');
  await signUp(dave, name);
  await screen(dave, 'account');
  // Every text the status shows, as it is set (each textContent write adds a new text node).
  await dave.eval(`window.exportTexts = [];
    new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes) window.exportTexts.push(n.textContent); })
      .observe(document.querySelector('#export-status'), { childList: true });
    true`);
  const folder = mkdtempSync(join(tmpdir(), 'huddle-downloads-'));
  try {
    await dave.allowDownloads(folder);
    const download = dave.nextDownload();
    await clickText(dave, 'Download my data');
    const saved = await download;
    assert.equal(saved.state, 'completed');
    assert.equal(saved.suggestedFilename, `huddle-export-${name}.tar`);
    await dave.waitFor(`document.querySelector('#export-status').dataset.state === 'done'`, 'the archive saved');
    const size = Number(await dave.eval(`document.querySelector('#export-status').dataset.size`));
    const file = readFileSync(join(folder, saved.guid));
    assert.equal(file.length, size, 'the saved file is the Blob');
    assert.equal(saved.totalBytes, size);
    assert.equal(file.subarray(0, 11).toString(), 'export.json');
    assert.equal(file.subarray(257, 262).toString(), 'ustar');
    const exported = JSON.parse(file.subarray(512, 512 + parseInt(file.subarray(124, 136).toString(), 8)).toString());
    assert.equal(exported.account.username, name);
    assert.match(await text(dave, '#export-status'), new RegExp(`^Saved huddle-export-${name}\\.tar \\(\\d+ KB\\): export\\.json and your photos\\.$`));
    const shown = await dave.eval('window.exportTexts');
    assert.equal(shown[0], 'Preparing your data…');
    assert.ok(shown.some((t) => /^Downloading your data… \d+ KB of \d+ KB \(100%\)$/.test(t)), `progress shown: ${JSON.stringify(shown)}`);
    await shot(dave, '39-data-downloaded-desktop');

    await clickText(dave, 'Download my data');
    await dave.waitFor(`document.querySelector('#export-status').dataset.state === 'refused'`, 'the second download refused');
    assert.match(await text(dave, '#export-status'), /^Not downloaded: You downloaded your data a moment ago: one download a minute\. Try again in \d+ s\.$/);
    assert.equal(await dave.eval(`document.querySelector('#export-status').className`), 'error');
    await shot(dave, '40-download-refused-desktop');
    assert.deepEqual(dave.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
