// The SDK's own test file of every op and event (../ops.test.js), run unchanged in headless
// Chromium with the browser's WebSocket, fetch and Blob, against the real server: the page is
// loaded through a proxy that serves clients/js next to the server, so it is the server's origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chromium } from './chromium.js';
import { Proxy, serverURL } from '../support.js';

const sdkDirectory = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let browser;
let proxy;

before(async () => {
  proxy = await Proxy.start(Number(new URL(serverURL).port), { files: sdkDirectory });
  browser = await Chromium.launch();
});

after(async () => {
  await browser?.close();
  proxy?.close();
});

test('ops.test.js passes in Chromium', async () => {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${proxy.port}/js-tests/test/browser/run.html?file=ops.test.js`);
  const results = await page.waitFor('window.results', 'the results', 240000);
  for (const result of results) console.log(`${result.ok ? 'passed' : 'FAILED'} in Chromium: ${result.name}${result.ok ? '' : `\n${result.error}`}`);
  assert.ok(results.length >= 9, `only ${results.length} results`);
  assert.deepEqual(results.filter((r) => !r.ok).map((r) => r.name), []);
});
