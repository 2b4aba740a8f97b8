// The part of node:test the SDK's test files use, for running them in a browser page.
const tests = [];
const afters = [];

export function test(name, fn) { tests.push({ name, fn }); }
export function after(fn) { afters.push(fn); }

/** Runs every registered test in order, then the `after` hooks; resolves with the results. */
export async function run() {
  const results = [];
  for (const { name, fn } of tests) {
    try {
      await fn();
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: String(error?.stack ?? error) });
    }
  }
  for (const fn of afters) await fn();
  return results;
}
