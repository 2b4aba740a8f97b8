// Drives the web app in a Chromium page as a user would: fills and submits its forms, clicks
// its buttons, switches screens. Shared by the web app's browser tests.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where screenshots go: HUDDLE_SCREENSHOTS, else a temporary folder. */
export const shots = process.env.HUDDLE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'huddle-screens-'));
mkdirSync(shots, { recursive: true });

/** Fills the named fields of the form `selector` and submits it as a user would. */
export const submit = (page, selector, values) => page.eval(`(() => {
  const form = document.querySelector(${JSON.stringify(selector)});
  for (const [name, value] of Object.entries(${JSON.stringify(values)})) {
    const field = form.elements[name];
    if (field.type === 'checkbox') field.checked = value;
    else field.value = value;
    field.dispatchEvent(new Event('input', { bubbles: true }));
  }
  form.requestSubmit();
  return true;
})()`);
export const click = (page, selector) => page.eval(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); el.click(); return true; })()`);
export const clickText = (page, text) => page.eval(`(() => {
  const el = [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === ${JSON.stringify(text)});
  if (!el) throw new Error('no button ' + ${JSON.stringify(text)});
  el.click();
  return true;
})()`);
export const screen = (page, name) => click(page, `.tabs button[data-screen="${name}"]`);
export const shot = async (page, name) => { await page.screenshot(join(shots, `${name}.png`)); };
