// The part of node:assert/strict the SDK's test files use, for running them in a browser page.
class AssertionError extends Error {}

function fail(message, fallback) { throw new AssertionError(message ?? fallback); }
const show = (value) => { try { return JSON.stringify(value); } catch { return String(value); } };

function isDeepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (ArrayBuffer.isView(a)) return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && isDeepEqual(a[key], b[key]));
}

const assert = {
  ok(value, message) { if (!value) fail(message, `expected a truthy value, got ${show(value)}`); },
  equal(actual, expected, message) { if (!Object.is(actual, expected)) fail(message, `${show(actual)} !== ${show(expected)}`); },
  deepEqual(actual, expected, message) { if (!isDeepEqual(actual, expected)) fail(message, `${show(actual)} is not deep-equal to ${show(expected)}`); },
  match(text, pattern, message) { if (!pattern.test(text)) fail(message, `${show(text)} does not match ${pattern}`); },
  async rejects(promise, expected, message) {
    let error;
    try { await promise; } catch (caught) { error = caught; }
    if (error === undefined) fail(message, 'expected a rejection');
    if (typeof expected === 'function') { if (!expected(error)) fail(message, `rejected with ${error}`); return; }
    for (const [key, value] of Object.entries(expected ?? {})) {
      if (!isDeepEqual(error[key], value)) fail(message, `rejected with ${key} ${show(error[key])}, not ${show(value)}: ${error}`);
    }
  },
};
assert.strict = assert;
export default assert;
