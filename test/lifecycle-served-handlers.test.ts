/**
 * ServedHandlers: a new policy version is served at once, the previous one's handlers stay until
 * the live configurations stop routing to them (the leader's PUT has landed), and what is
 * registered is the new version alone.
 */
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { ServedHandlers, type RoutedPathsReader } from '../src/lifecycle/served-handlers.js';
import { WebhookRegistry } from '../src/policy/registry.js';
import { webhookPath } from '../src/policy/types.js';
import { captureLogs, mutating, validating } from './support/server/server-harness.js';

const allow = () => ({ allowed: true as const });
const v1 = [validating('require-team', allow), mutating('default-labels', allow)];
const v2 = [validating('require-owner', allow), mutating('default-labels', allow)];

/** The live configurations, as the double would return them; `fail` makes the next reads throw. */
function liveConfigurations(initial: readonly string[]) {
  const state = { routed: new Set(initial), fail: false as boolean, reads: 0 };
  const reader: RoutedPathsReader = async (signal) => {
    signal.throwIfAborted();
    state.reads++;
    if (state.fail) throw new Error('503 from the API');
    return new Set(state.routed);
  };
  return { state, reader };
}

function setup(t: Test, reader: RoutedPathsReader | undefined, custom = [validating('custom-check', allow)]) {
  const registry = new WebhookRegistry([...v1, ...custom]);
  const lifetime = new AbortController();
  t.teardown(() => lifetime.abort());
  const logs = captureLogs();
  const handlers = new ServedHandlers(
    { registry, customWebhooks: custom, routedPaths: reader, signal: lifetime.signal, logger: logs.logger, recheck: { initialMs: 10, maxMs: 40 } },
    v1,
  );
  return { registry, handlers, lifetime, logs };
}

const paths = (registry: WebhookRegistry): string[] => registry.list().map(webhookPath).sort();

/** The next registry change, bounded. */
async function nextChange(registry: WebhookRegistry, timeoutMs = 10_000): Promise<void> {
  await once(registry, 'change', { signal: AbortSignal.timeout(timeoutMs) });
}

/** Waits (bounded) until the registry serves exactly `expected`. */
async function untilServed(registry: WebhookRegistry, expected: string[]): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (JSON.stringify(paths(registry)) !== JSON.stringify(expected)) {
    await nextChange(registry, Math.max(1, Math.round(deadline - performance.now())));
  }
}

t.test('the new version is served at once, the old handler until the configurations stop routing to it', async (t) => {
  const live = liveConfigurations(['/validate/require-team', '/mutate/default-labels', '/validate/custom-check']);
  const { registry, handlers, logs } = setup(t, live.reader);
  handlers.replace(v2);
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner', '/validate/require-team'], 'new and old served together');
  t.same(handlers.desired().map(webhookPath).sort(), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner'], 'only the new version is registered');
  t.same(handlers.retiring(), ['/validate/require-team']);
  t.equal(registry.lookup('mutating', 'default-labels'), v2[1], 'a handler in both versions is the new one');

  // While the PUT has not landed the old path stays routed: several reads, still served.
  const readsBefore = live.state.reads;
  while (live.state.reads < readsBefore + 3) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(registry.lookup('validating', 'require-team'), 'still served while routed');

  const retired = nextChange(registry);
  live.state.routed = new Set(['/validate/require-owner', '/mutate/default-labels', '/validate/custom-check']);
  await retired;
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner'], 'retired once no longer routed');
  t.same(handlers.retiring(), []);
  t.match(logs.lines.find((l) => l['msg'] === 'previous handlers retired'), { retired: ['/validate/require-team'] });
  const readsAfter = live.state.reads;
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(live.state.reads, readsAfter, 'no more reads once nothing retires');
});

t.test('without a reader (nothing registered from here) the old handlers go at once', async (t) => {
  const { registry, handlers, logs } = setup(t, undefined);
  handlers.replace(v2);
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner']);
  t.match(logs.lines.find((l) => l['msg'] === 'previous handlers retired'), { why: 'nothing is registered from this process' });
});

t.test('a failed read keeps the old handlers; a later read retires them', async (t) => {
  const live = liveConfigurations(['/validate/require-team']);
  live.state.fail = true;
  const { registry, handlers, logs } = setup(t, live.reader);
  handlers.replace(v2);
  while (live.state.reads < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(registry.lookup('validating', 'require-team'), 'kept while the API fails');
  t.match(logs.lines.find((l) => l['msg'] === 'reading the webhook configurations failed; previous handlers stay served'), { level: 40, error: '503 from the API' });
  const retired = nextChange(registry);
  live.state.routed = new Set();
  live.state.fail = false;
  await retired;
  t.notOk(registry.lookup('validating', 'require-team'));
});

t.test('versions in quick succession: leftovers of older versions keep retiring, a name that comes back is the new one', async (t) => {
  const live = liveConfigurations(['/validate/require-team', '/mutate/default-labels']);
  const { registry, handlers } = setup(t, live.reader, []);
  handlers.replace(v2);
  const v3 = [validating('require-app', allow)];
  handlers.replace(v3);
  t.same(handlers.retiring().sort(), ['/mutate/default-labels', '/validate/require-owner', '/validate/require-team'], 'v1 and v2 leftovers');
  const v4 = [validating('require-team', () => ({ allowed: false as const, message: 'v4' }))];
  handlers.replace(v4);
  t.equal(registry.lookup('validating', 'require-team'), v4[0], 'the name is served by the new version');
  t.notOk(handlers.retiring().includes('/validate/require-team'), 'and no longer retiring');
  live.state.routed = new Set(['/validate/require-team']);
  await untilServed(registry, ['/validate/require-team']);
  t.same(handlers.retiring(), [], 'every leftover retired once unrouted');
});

t.test('an invalid new set throws and changes nothing', async (t) => {
  const live = liveConfigurations(['/validate/require-team']);
  const { registry, handlers } = setup(t, live.reader, [validating('require-owner', allow)]);
  const before = paths(registry);
  t.throws(() => handlers.replace(v2), /two validating webhooks are named "require-owner"/);
  t.same(paths(registry), before);
  t.same(handlers.retiring(), []);
  t.same(handlers.desired().map(webhookPath).sort(), ['/mutate/default-labels', '/validate/require-owner', '/validate/require-team']);
});

t.test('the lifetime signal stops the retirement loop', async (t) => {
  const live = liveConfigurations(['/validate/require-team']);
  const { registry, handlers, lifetime } = setup(t, live.reader);
  handlers.replace(v2);
  while (live.state.reads < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  lifetime.abort();
  const reads = live.state.reads;
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.equal(live.state.reads, reads, 'no read after the abort');
  t.ok(registry.lookup('validating', 'require-team'), 'what was served stays served until the server closes');
});
