// The web app in headless Chromium, two users in two browser contexts (one at phone width, one
// at desktop width), against the real server: sign up, befriend, chat both ways, Coffee match,
// post and like, the clock hand following a walk, a memory with a photo, a kill -9 + restart
// mid-chat with nothing lost or doubled and typed text kept; markup from others stays text;
// every control is labelled and reachable by keyboard; no horizontal scrolling at 390 px.
// Screenshots go to HUDDLE_SCREENSHOTS (default: a temporary folder), named in the output.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Chromium } from './chromium.js';
import { Proxy, OwnServer, uniqueName } from '../support.js';
import { shots, submit, click, clickText, screen, shot } from './app-driver.js';

const XSS = '<img src=x onerror="window.__xss=(window.__xss||0)+1">';

let browser;
let server;
let proxy;
let alice; // a phone: 390 px
let bob; // a desktop: 1280 px
let names;

const messageTexts = (page) => page.eval(`[...document.querySelectorAll('#messages li:not(.pending)')].map((li) => li.lastChild.textContent)`);

before(async () => {
  server = await OwnServer.start();
  proxy = await Proxy.start(server.port);
  browser = await Chromium.launch();
  alice = await browser.newPage({ width: 390, height: 844, mobile: true });
  bob = await browser.newPage({ width: 1280, height: 900 });
  names = { alice: uniqueName('alice'), bob: uniqueName('bob') };
  console.log(`screenshots: ${shots}`);
});

after(async () => {
  await browser?.close();
  proxy?.close();
  await server?.dispose();
});

test('two users: sign up, befriend, chat, Coffee, feed, clock, memories, restart mid-chat', async () => {
  const app = `http://127.0.0.1:${proxy.port}/app/`;
  await alice.goto(app);
  await bob.goto(app);
  await alice.waitFor(`document.querySelector('#connection').textContent === 'Connected'`, 'alice connected');
  // The first load: every HTTP request and its bytes on the wire (the WebSocket aside).
  const load = await alice.eval(`[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .filter((e) => !e.name.startsWith('ws')).map((e) => ({ name: new URL(e.name).pathname, bytes: e.transferSize }))`);
  const bytes = load.reduce((sum, e) => sum + e.bytes, 0);
  console.log(`first load: ${load.length} requests, ${bytes} bytes: ${load.map((e) => `${e.name} ${e.bytes}`).join(', ')}`);
  assert.deepEqual(load.map((e) => e.name).sort(), ['/app/', '/app/app.css', '/app/app.js', '/sdk/huddle.js']);
  assert.ok(bytes < 100_000, `first load of ${bytes} bytes`);
  await shot(alice, '01-sign-in-phone');
  // A display name with markup is refused by the server's username rules and shown as text.
  await submit(alice, '#signup-form', { username: XSS, email: 'x@example.com', password: 'correct horse battery' });
  await alice.waitFor(`document.querySelector('#signin-error').textContent.includes('invalid_username')`, 'the refusal');
  for (const [page, name] of [[alice, names.alice], [bob, names.bob]]) {
    await submit(page, '#signup-form', { username: name, email: `${name}@example.com`, password: 'correct horse battery' });
    await page.waitFor(`!document.querySelector('#app').hidden`, `${name} signed in`);
    assert.equal(await page.eval(`getComputedStyle(document.querySelector('#signin')).display`), 'none');
    assert.equal(await page.eval(`getComputedStyle(document.querySelector('#badge-total')).display`), 'none');
  }

  // Friends: alice finds bob and asks, with a message carrying markup; bob accepts.
  await screen(alice, 'friends');
  await submit(alice, '#search-form', { prefix: names.bob.slice(0, 6), message: `coffee? ${XSS}` });
  await alice.waitFor(`[...document.querySelectorAll('#search-results button')].some((b) => b.textContent === 'Ask ${names.bob} to be friends')`, 'search result');
  await clickText(alice, `Ask ${names.bob} to be friends`);
  await screen(bob, 'friends');
  await bob.waitFor(`document.querySelector('#incoming').textContent.includes('${names.alice}')`, 'the request at bob');
  assert.ok((await bob.eval(`document.querySelector('#incoming').textContent`)).includes(XSS));
  await shot(bob, '02-friends-desktop');
  await clickText(bob, `Accept ${names.alice}`);
  await alice.waitFor(`document.querySelector('#friends').textContent.includes('${names.bob}')`, 'bob in alice\'s friends');
  await bob.waitFor(`document.querySelector('#friends').textContent.includes('${names.alice}')`, 'alice in bob\'s friends');
  await shot(alice, '03-friends-phone');

  // Chat both ways, with unread badges and the typing indicator.
  await clickText(alice, `Chat with ${names.bob}`);
  await submit(alice, '#chat-form', { text: 'hello bob' });
  await screen(bob, 'chat');
  await bob.waitFor(`document.querySelector('#badge-total').textContent === '1' && !document.querySelector('#badge-total').hidden`, 'bob\'s unread badge');
  await clickText(bob, names.alice + '1');
  await bob.waitFor(`document.querySelector('#messages').textContent.includes('hello bob')`, 'the message at bob');
  await bob.waitFor(`document.querySelector('#badge-total').hidden`, 'the badge cleared');
  await bob.eval(`(() => { const input = document.querySelector('#chat-input'); input.value = 'h'; input.dispatchEvent(new Event('input')); return true; })()`);
  await alice.waitFor(`document.querySelector('#typing').textContent === '${names.bob} is typing…'`, 'the typing indicator');
  await submit(bob, '#chat-form', { text: 'hi alice' });
  await submit(bob, '#chat-form', { text: XSS });
  await alice.waitFor(`document.querySelector('#messages').textContent.includes('hi alice') && document.querySelector('#messages').textContent.includes('<img')`, 'bob\'s answers at alice');
  await shot(alice, '04-chat-phone');
  await shot(bob, '05-chat-desktop');

  // The server is killed mid-chat and restarted: bob has a half-typed line, alice sends while it is down.
  await bob.eval(`document.querySelector('#chat-input').value = 'half-typed'; true`);
  await server.kill9();
  proxy.cut();
  await alice.waitFor(`document.querySelector('#connection').textContent === 'Reconnecting…'`, 'alice sees reconnecting');
  await shot(alice, '06-reconnecting-phone');
  await submit(alice, '#chat-form', { text: 'sent while the server was down' });
  await alice.waitFor(`document.querySelector('#messages li.pending')`, 'a pending message');
  await server.restart();
  proxy.retarget(server.port);
  await alice.waitFor(`document.querySelector('#connection').textContent === 'Resumed'`, 'alice resumed');
  await bob.waitFor(`document.querySelector('#connection').textContent === 'Resumed'`, 'bob resumed');
  await bob.waitFor(`document.querySelector('#messages').textContent.includes('sent while the server was down')`, 'the message after the restart');
  await alice.waitFor(`!document.querySelector('#messages li.pending')`, 'the pending message confirmed');
  assert.equal(await bob.eval(`document.querySelector('#chat-input').value`), 'half-typed');
  await submit(bob, '#chat-form', { text: 'after the restart' });
  await alice.waitFor(`document.querySelector('#messages').textContent.includes('after the restart')`, 'bob\'s message after the restart');
  await bob.waitFor(`!document.querySelector('#messages li.pending') && document.querySelector('#messages').textContent.includes('after the restart')`, 'bob\'s own message confirmed');
  const expected = ['hello bob', 'hi alice', XSS, 'sent while the server was down', 'after the restart'];
  assert.deepEqual(await messageTexts(alice), expected);
  assert.deepEqual(await messageTexts(bob), expected);

  // Coffee: both turn it on and each sees the match.
  for (const page of [alice, bob]) {
    await screen(page, 'activities');
    await page.waitFor(`document.querySelector('#toggles input[value="Coffee"]')`, 'the toggles');
    await click(page, '#toggles input[value="Coffee"]');
  }
  await alice.waitFor(`document.querySelector('#matches li[data-user="${names.bob}"][data-activity="Coffee"]')`, 'alice\'s match');
  await bob.waitFor(`document.querySelector('#matches li[data-user="${names.alice}"][data-activity="Coffee"]')`, 'bob\'s match');
  await shot(alice, '07-matches-phone');

  // Feed: alice posts (markup included), bob likes it and comments.
  await screen(alice, 'feed');
  await submit(alice, '#post-form', { text: `gym at 6? ${XSS}`, activity: 'Gym' });
  await screen(bob, 'feed');
  await bob.waitFor(`document.querySelector('#posts li[data-post] .text')?.textContent === ${JSON.stringify(`gym at 6? ${XSS}`)}`, 'the post at bob');
  await clickText(bob, 'Like (0)');
  await alice.waitFor(`[...document.querySelectorAll('#posts button.like')].some((b) => b.textContent === 'Like (1)')`, 'the like at alice');
  await bob.eval(`(() => { const form = document.querySelector('#posts li[data-post] form'); form.elements.comment.value = ${JSON.stringify(`in ${XSS}`)}; form.requestSubmit(); return true; })()`);
  await alice.waitFor(`document.querySelector('#posts .comments').textContent.includes('in <img')`, 'the comment at alice');
  await shot(alice, '08-feed-phone');
  await shot(bob, '09-feed-desktop');

  // The clock: alice defines home and work and walks home -> unknown -> work; bob's hand follows.
  await screen(alice, 'clock');
  await submit(alice, '#place-form', { label: 'home', lat: '48.8566', lon: '2.3522', radius: '100' });
  await alice.waitFor(`document.querySelector('#places').textContent.includes('home')`, 'home');
  await submit(alice, '#place-form', { label: 'work', lat: '48.8738', lon: '2.2950', radius: '150' });
  await alice.waitFor(`document.querySelector('#places').textContent.includes('work')`, 'work');
  await screen(bob, 'clock');
  const hand = `document.querySelector('#clock-hands .hand[data-friend="${names.alice}"]')`;
  await bob.waitFor(`${hand}?.dataset.place === 'unknown'`, 'the hand at unknown');
  const angles = [await bob.eval(`${hand}.getAttribute('transform')`)];
  const walk = [['home', [[48.8566, 2.3522]]], ['unknown', [[48.8650, 2.3240], [48.8652, 2.3236]]], ['work', [[48.8738, 2.2950], [48.8738, 2.2951]]]];
  for (const [place, fixes] of walk) {
    for (const [lat, lon] of fixes) {
      await submit(alice, '#fix-form', { lat: String(lat), lon: String(lon), accuracy: '10' });
      await alice.waitFor(`document.querySelector('#my-place').textContent !== ''`, 'a decision');
      await new Promise((resolve) => setTimeout(resolve, 5)); // the next fix must be newer, by the clock
    }
    await bob.waitFor(`${hand}?.dataset.place === '${place}'`, `the hand at ${place}`);
    angles.push(await bob.eval(`${hand}.getAttribute('transform')`));
    await shot(bob, `10-clock-${place}-desktop`);
  }
  assert.equal(new Set(angles.slice(1)).size, 3, `the hand moved: ${angles}`);
  await shot(alice, '11-clock-phone');

  // Memories: a memory with a point and a photo, shown from the server.
  await screen(alice, 'memories');
  await submit(alice, '#memory-form', { title: `Lisbon ${XSS}`, date: '2025-06-14', place_name: 'Alfama' });
  await alice.waitFor(`!document.querySelector('#memory-detail').hidden`, 'the memory opened');
  const png = join(shots, 'photo.png');
  writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64'));
  await alice.send('DOM.enable');
  await alice.setFile('#point-form input[name="photo"]', png);
  await submit(alice, '#point-form', { note: 'tram 28' });
  await alice.waitFor(`document.querySelector('#points img')?.complete && document.querySelector('#points img').naturalWidth === 2`, 'the photo shown');
  assert.match(await alice.eval(`document.querySelector('#points img').src`), /^blob:/);
  await shot(alice, '12-memories-phone');

  // No markup from anyone ran or became an element.
  for (const page of [alice, bob]) {
    assert.equal(await page.eval(`window.__xss ?? 0`), 0);
    assert.equal(await page.eval(`document.querySelectorAll('main img:not(#points img)').length`), 0);
    assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION|WebSocket|Failed to load resource/.test(e)), []);
  }
});

test('every control is labelled and reachable with the Tab key; no sideways scrolling at 390 px', async () => {
  for (const [page, width] of [[alice, 390], [bob, 1280]]) {
    for (const name of ['chat', 'friends', 'feed', 'activities', 'clock', 'memories', 'account']) {
      await screen(page, name);
      const unlabelled = await page.eval(`[...document.querySelectorAll('button, input, select')].filter((el) => el.offsetParent !== null)
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent.trim())))
        .map((el) => el.outerHTML)`);
      assert.deepEqual(unlabelled, [], `${name} at ${width}`);
      assert.ok(await page.eval(`document.documentElement.scrollWidth <= window.innerWidth`), `${name} scrolls sideways at ${width} px`);
      // Tab through the page and collect what takes focus; every visible, enabled control must.
      // Controls are known by their markup, not as elements: a live update (the unread count
      // the screen's mark_read answers) may render a list again while the keys are pressed.
      await page.eval(`document.activeElement?.blur(); window.__focused = new Set(); document.addEventListener('focusin', (e) => __focused.add(e.target.outerHTML), { capture: true }); true`);
      const controls = await page.eval(`[...document.querySelectorAll('button, input, select')].filter((el) => el.offsetParent !== null && !el.disabled).length`);
      for (let i = 0; i < controls + 8; i++) await page.press('Tab');
      const missed = await page.eval(`[...document.querySelectorAll('button, input, select')].filter((el) => el.offsetParent !== null && !el.disabled && !__focused.has(el.outerHTML)).map((el) => el.outerHTML)`);
      assert.deepEqual(missed, [], `not reachable by keyboard on ${name} at ${width} px: ${missed.join(' ')}`);
      if (width === 390) await shot(page, `20-${name}-phone`);
    }
  }
});
