// Headless Chromium driven over the Chrome DevTools Protocol, with Node's own WebSocket: no
// test dependency. One browser; isolated contexts (separate storage, like two users' phones).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const chromiumPath = process.env.HUDDLE_CHROMIUM ?? '/usr/bin/chromium';

export class Chromium {
  static async launch() {
    const profile = mkdtempSync(join(tmpdir(), 'huddle-chromium-'));
    const child = spawn(chromiumPath, [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const endpoint = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`chromium did not start: ${log}`)), 60000);
      child.stderr.on('data', (bytes) => {
        log += bytes.toString();
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(log);
        if (match) { clearTimeout(timer); resolve(match[1]); }
      });
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`chromium exited ${code}: ${log}`)); });
    });
    const browser = new Chromium(child, profile);
    await browser.connect(endpoint);
    return browser;
  }

  constructor(child, profile) {
    this.child = child;
    this.profile = profile;
    this.nextId = 0;
    this.pending = new Map();
    this.listeners = new Set();
  }

  connect(endpoint) {
    this.ws = new WebSocket(endpoint);
    this.ws.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (data.id !== undefined) {
        const waiter = this.pending.get(data.id);
        this.pending.delete(data.id);
        if (data.error) waiter?.reject(new Error(`${waiter.method}: ${data.error.message}`));
        else waiter?.resolve(data.result);
      } else {
        for (const listener of this.listeners) listener(data);
      }
    };
    // A browser that goes away (it crashed, or was killed) fails every request still waiting
    // and every later one: a send on a closed WebSocket is dropped silently, and a request that
    // is never answered hung the whole run (even close() waited for its Browser.close reply).
    this.ws.onclose = () => {
      this.gone = new Error(`the connection to chromium closed (chromium exit code ${this.child.exitCode})`);
      for (const waiter of this.pending.values()) waiter.reject(new Error(`${waiter.method}: ${this.gone.message}`));
      this.pending.clear();
    };
    return new Promise((resolve, reject) => { this.ws.onopen = resolve; this.ws.onerror = () => reject(new Error('cannot reach chromium')); });
  }

  send(method, params = {}, sessionId) {
    if (this.gone) return Promise.reject(new Error(`${method}: ${this.gone.message}`));
    this.nextId += 1;
    const id = this.nextId;
    this.ws.send(JSON.stringify({ id, method, params, sessionId }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
  }

  /** A page in a fresh browser context (its own cookies and localStorage), `width` px wide. */
  async newPage({ width = 1280, height = 900, mobile = false } = {}) {
    const { browserContextId } = await this.send('Target.createBrowserContext');
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, browserContextId);
    await page.send('Page.enable');
    await page.send('Runtime.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile });
    return page;
  }

  async close() {
    try { await this.send('Browser.close'); } catch { /* already gone */ }
    await new Promise((resolve) => { if (this.child.exitCode !== null) resolve(); else { this.child.once('exit', resolve); setTimeout(() => this.child.kill('SIGKILL'), 5000); } });
    rmSync(this.profile, { recursive: true, force: true });
  }
}

export class Page {
  constructor(browser, sessionId, browserContextId) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.browserContextId = browserContextId;
    this.errors = [];
    browser.listeners.add((message) => {
      if (message.sessionId !== sessionId) return;
      if (message.method === 'Runtime.exceptionThrown') this.errors.push(message.params.exceptionDetails.exception?.description ?? message.params.exceptionDetails.text);
      if (message.method === 'Runtime.consoleAPICalled' && message.params.type === 'error') this.errors.push(message.params.args.map((a) => a.value ?? a.description).join(' '));
    });
  }

  send(method, params = {}) { return this.browser.send(method, params, this.sessionId); }

  async goto(url) {
    const loaded = new Promise((resolve) => {
      const listener = (message) => {
        if (message.sessionId === this.sessionId && message.method === 'Page.loadEventFired') { this.browser.listeners.delete(listener); resolve(); }
      };
      this.browser.listeners.add(listener);
    });
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** Evaluates `expression` (awaited) in the page and returns its value. */
  async eval(expression) {
    const result = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (result.exceptionDetails) throw new Error(`in page: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}\n${expression}`);
    return result.result.value;
  }

  /** Waits until `expression` is truthy in the page; returns its value. */
  async waitFor(expression, what = expression, timeoutMs = 30000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Not yet there is worth another try; a browser that is gone is not.
      const value = await this.eval(expression).catch((error) => { if (this.browser.gone) throw error; return undefined; });
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async screenshot(path) {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    writeFileSync(path, Buffer.from(data, 'base64'));
  }

  async setWidth(width, height = 900) {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: width < 600 });
  }

  async press(key, code = key, keyCode = 9) {
    await this.send('Input.dispatchKeyEvent', { type: 'keyDown', key, code, windowsVirtualKeyCode: keyCode });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code, windowsVirtualKeyCode: keyCode });
  }

  /** Saves this page's downloads into `directory`, each file named by its download's guid. */
  async allowDownloads(directory) {
    await this.browser.send('Browser.setDownloadBehavior', {
      behavior: 'allowAndName', downloadPath: directory, eventsEnabled: true, browserContextId: this.browserContextId,
    });
  }

  /** Resolves with the next download that begins, once it ends: `{ guid, suggestedFilename,
   * state: 'completed' | 'canceled', receivedBytes, totalBytes }`. Call before the click. */
  nextDownload() {
    return new Promise((resolve) => {
      let begun = null;
      const listener = (message) => {
        if (message.method === 'Browser.downloadWillBegin' && !begun) begun = message.params;
        if (message.method !== 'Browser.downloadProgress' || message.params.guid !== begun?.guid) return;
        if (message.params.state === 'inProgress') return;
        this.browser.listeners.delete(listener);
        resolve({ ...message.params, suggestedFilename: begun.suggestedFilename });
      };
      this.browser.listeners.add(listener);
    });
  }

  async setFile(selector, path) {
    const { root } = await this.send('DOM.getDocument');
    const { nodeId } = await this.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    await this.send('DOM.setFileInputFiles', { nodeId, files: [path] });
  }
}
