/**
 * ServedHandlers: a new policy version is served at once; a previous version's handler stays
 * until no live configuration has routed to it for the grace period; a retired handler whose path
 * a live configuration routes to again is served again; what is registered is the new version alone.
 */
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { MAX_PREVIOUS_HANDLERS, ServedHandlers } from '../src/lifecycle/served-handlers.js';
import type { RoutedPaths } from '../src/registration/routed-paths.js';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import { webhookPath } from '../src/webhooks/group-path.js';
import { captureLogs, mutating, validating } from './support/server/server-harness.js';

const allow = () => ({ allowed: true as const });
const v1 = [validating('require-team', allow), mutating('default-labels', allow)];
const v2 = [validating('require-owner', allow), mutating('default-labels', allow)];
const GRACE_MS = 150;

/** The live configurations' routes, as a view of them reports: set `routed`, then `publish()`. */
function liveRoutes(initial: readonly string[] | undefined) {
  const listeners = new Set<() => void>();
  const state = { routed: initial === undefined ? undefined : new Set(initial) };
  const routes: RoutedPaths = {
    current: () => state.routed,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const publish = (routed: readonly string[]): void => {
    state.routed = new Set(routed);
    for (const listener of listeners) listener();
  };
  return { routes, publish, listeners };
}

function setup(t: Test, routes: RoutedPaths | undefined, custom = [validating('custom-check', allow)]) {
  const registry = new WebhookRegistry([...v1, ...custom]);
  const lifetime = new AbortController();
  t.teardown(() => lifetime.abort());
  const logs = captureLogs();
  const handlers = new ServedHandlers({ registry, customWebhooks: custom, routedPaths: routes, retainMs: GRACE_MS, signal: lifetime.signal, logger: logs.logger }, v1, 'none');
  return { registry, handlers, lifetime, logs };
}

const paths = (registry: WebhookRegistry): string[] => registry.list().map(webhookPath).sort();

/** The next registry change, bounded. */
async function nextChange(registry: WebhookRegistry, timeoutMs = 10_000): Promise<void> {
  await once(registry, 'change', { signal: AbortSignal.timeout(timeoutMs) });
}

t.test('the new version is served at once; the old handler until no configuration has routed to it for the grace period', async (t) => {
  const live = liveRoutes(['/validate/require-team', '/mutate/default-labels', '/validate/custom-check']);
  const { registry, handlers, logs } = setup(t, live.routes);
  handlers.replace(v2, 'none');
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner', '/validate/require-team'], 'new and old served together');
  t.same(handlers.desired().map(webhookPath).sort(), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner'], 'only the new version is registered');
  t.same(handlers.retiring(), ['/validate/require-team']);
  t.equal(registry.lookup('mutating', 'default-labels'), v2[1], 'a handler in both versions is the new one');

  // Still routed, long past the grace: still served.
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
  live.publish(['/validate/require-team', '/validate/require-owner']);
  t.ok(registry.lookup('validating', 'require-team'), 'still served while routed');

  const unroutedAt = performance.now();
  const retired = nextChange(registry);
  live.publish(['/validate/require-owner', '/mutate/default-labels', '/validate/custom-check']);
  t.ok(registry.lookup('validating', 'require-team'), 'not retired the moment the routes change: a lagging kube-apiserver still calls it');
  await retired;
  t.ok(performance.now() - unroutedAt >= GRACE_MS - 2, `retired ${Math.round(performance.now() - unroutedAt)} ms after the routes changed`);
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner'], 'retired after the grace');
  t.same(handlers.retiring(), []);
  t.match(logs.lines.find((l) => l['msg'] === 'previous handlers retired'), { retired: ['/validate/require-team'] });
});

t.test('a retired handler is served again when a live configuration routes to it again, and retired again after it stops', async (t) => {
  const live = liveRoutes(['/validate/require-team']);
  const { registry, handlers, logs } = setup(t, live.routes, []);
  handlers.replace(v2, 'none');
  const retired = nextChange(registry);
  live.publish(['/validate/require-owner']);
  await retired;
  t.notOk(registry.lookup('validating', 'require-team'), 'retired');

  // A stale leader (or an old copy applied by hand) routes to it again.
  live.publish(['/validate/require-team', '/validate/require-owner']);
  t.equal(registry.lookup('validating', 'require-team'), v1[0], 'served again at once, the same handler');
  t.match(logs.lines.find((l) => l['msg'] === 'previous handlers served again: a live webhook configuration routes to them'), { level: 40, readopted: ['/validate/require-team'] });
  t.same(handlers.retiring(), ['/validate/require-team']);
  t.same(handlers.desired().map(webhookPath).sort(), ['/mutate/default-labels', '/validate/require-owner'], 'what this replica registers is unchanged');

  const again = nextChange(registry);
  live.publish(['/validate/require-owner']);
  await again;
  t.notOk(registry.lookup('validating', 'require-team'), 'retired again after the grace');
});

t.test('routes not read yet: every previous handler counts as routed', async (t) => {
  const live = liveRoutes(undefined);
  const { registry, handlers } = setup(t, live.routes, []);
  handlers.replace(v2, 'none');
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
  t.ok(registry.lookup('validating', 'require-team'), 'kept while nothing is known');
  const retired = nextChange(registry);
  live.publish([]);
  await retired;
  t.notOk(registry.lookup('validating', 'require-team'));
});

t.test('without live routes (nothing registered from here) the old handlers go at once, and none comes back', async (t) => {
  const { registry, handlers, logs } = setup(t, undefined);
  handlers.replace(v2, 'none');
  t.same(paths(registry), ['/mutate/default-labels', '/validate/custom-check', '/validate/require-owner']);
  t.match(logs.lines.find((l) => l['msg'] === 'previous handlers retired'), { why: 'nothing is registered from this process' });
  t.same(handlers.retiring(), []);
});

t.test('versions in quick succession: leftovers of older versions keep retiring, a name that comes back is the new one', async (t) => {
  const live = liveRoutes(['/validate/require-team', '/mutate/default-labels']);
  const { registry, handlers } = setup(t, live.routes, []);
  handlers.replace(v2, 'none');
  const v3 = [validating('require-app', allow)];
  handlers.replace(v3, 'none');
  t.same(handlers.retiring().sort(), ['/mutate/default-labels', '/validate/require-owner', '/validate/require-team'], 'v1 and v2 leftovers');
  const v4 = [validating('require-team', () => ({ allowed: false as const, message: 'v4' }))];
  handlers.replace(v4, 'none');
  t.equal(registry.lookup('validating', 'require-team'), v4[0], 'the name is served by the new version');
  t.notOk(handlers.retiring().includes('/validate/require-team'), 'and no longer retiring');
  live.publish(['/validate/require-team']);
  while (handlers.retiring().length > 0) await nextChange(registry);
  t.same(paths(registry), ['/validate/require-team'], 'every leftover retired once unrouted');
  live.publish(['/validate/require-team', '/validate/require-owner']);
  t.ok(registry.lookup('validating', 'require-owner'), 'a leftover of v2, routed again, is served again');
  t.equal(registry.lookup('validating', 'require-team'), v4[0], 'and the current version keeps its own');
});

t.test('an invalid new set throws and changes nothing', async (t) => {
  const live = liveRoutes(['/validate/require-team']);
  const { registry, handlers } = setup(t, live.routes, [validating('require-owner', allow)]);
  const before = paths(registry);
  t.throws(() => handlers.replace(v2, 'none'), /two validating webhooks are named "require-owner"/);
  t.same(paths(registry), before);
  t.same(handlers.retiring(), []);
  t.same(handlers.desired().map(webhookPath).sort(), ['/mutate/default-labels', '/validate/require-owner', '/validate/require-team']);
});

t.test(`at most ${MAX_PREVIOUS_HANDLERS} earlier handlers are remembered, the most recently replaced`, async (t) => {
  const live = liveRoutes([]);
  const { registry, handlers } = setup(t, live.routes, []);
  for (let version = 0; version <= MAX_PREVIOUS_HANDLERS + 1; version++) handlers.replace([validating(`rule-${version}`, allow)], 'none');
  while (handlers.retiring().length > 0) await nextChange(registry);
  live.publish(['/validate/rule-0', '/validate/rule-1', '/validate/rule-2', '/validate/require-team']);
  t.notOk(registry.lookup('validating', 'rule-0'), 'the oldest is forgotten');
  t.notOk(registry.lookup('validating', 'require-team'));
  t.ok(registry.lookup('validating', 'rule-2'), 'a recent one comes back');
});

t.test('the lifetime signal stops following the routes', async (t) => {
  const live = liveRoutes(['/validate/require-team']);
  const { registry, handlers, lifetime } = setup(t, live.routes);
  handlers.replace(v2, 'none');
  live.publish([]);
  lifetime.abort();
  t.equal(live.listeners.size, 0, 'unsubscribed');
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
  t.ok(registry.lookup('validating', 'require-team'), 'what was served stays served until the server closes');
});

t.test('grouped: the groups are registered; an entry stays served while a group path names it, and retires after the grace once none does', async (t) => {
  const v1Group = '/validate/validating-fail-t10/require-team.custom-check';
  const live = liveRoutes([v1Group, '/mutate/mutating-fail-t10/default-labels']);
  const { registry, handlers } = setup(t, live.routes);
  handlers.replace(v1, 'auto');
  t.same(handlers.desired().map(webhookPath), ['/validate/validating-fail-t10/require-team.custom-check', '/mutate/mutating-fail-t10/default-labels'], 'registered as groups');
  t.ok(registry.group(v1Group), 'the group is served with its shared matching');

  handlers.replace(v2, 'auto');
  t.same(handlers.desired().map(webhookPath), ['/validate/validating-fail-t10/require-owner.custom-check', '/mutate/mutating-fail-t10/default-labels'], 'same names, the members in the path');
  t.same(handlers.retiring(), ['/validate/require-team'], 'require-team left the policy but a group path still names it');
  live.publish(['/validate/validating-fail-t10/require-owner.custom-check', v1Group]);
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
  t.ok(registry.lookup('validating', 'require-team'), 'served while any live path names it');

  const retired = nextChange(registry);
  const unroutedAt = performance.now();
  live.publish(['/validate/validating-fail-t10/require-owner.custom-check', '/mutate/mutating-fail-t10/default-labels']);
  await retired;
  t.ok(performance.now() - unroutedAt >= GRACE_MS - 2, 'after the grace');
  t.notOk(registry.lookup('validating', 'require-team'), 'retired');

  live.publish(['/validate/require-team']);
  t.ok(registry.lookup('validating', 'require-team'), 'its own path routed again (grouping none somewhere): served again');
});

t.test('definitions: the entries served now say theirs, an earlier one its own while it is served; one is found by its definition', async (t) => {
  const live = liveRoutes(['/validate/require-team']);
  const { registry, handlers } = setup(t, live.routes, []);
  const team = 'sha256:' + 'a'.repeat(32);
  const owner = 'sha256:' + 'b'.repeat(32);
  handlers.replace(v1, 'none', new Map([['validating/require-team', team]]));
  t.same(Object.fromEntries(handlers.definitions()), { 'validating/require-team': team });
  t.equal(handlers.withDefinition('validating', team), v1[0], 'the current entry so defined');
  t.equal(handlers.withDefinition('mutating', team), undefined, 'per type');

  // require-team renamed require-team-r1, the same definition; require-owner another.
  const renamed = [validating('require-team-r1', allow), validating('require-owner', allow)];
  handlers.replace(renamed, 'none', new Map([['validating/require-team-r1', team], ['validating/require-owner', owner]]));
  t.same(Object.fromEntries(handlers.definitions()), { 'validating/require-team-r1': team, 'validating/require-owner': owner, 'validating/require-team': team }, 'the earlier entry, still served, with the definition it had');
  t.equal(handlers.withDefinition('validating', team), renamed[0], "the current version's entry first");
  t.equal(handlers.withDefinition('validating', 'sha256:' + 'c'.repeat(32)), undefined, 'none so defined');

  live.publish(['/validate/require-team-r1']);
  while (registry.lookup('validating', 'require-team')) await nextChange(registry);
  t.same(Object.fromEntries(handlers.definitions()), { 'validating/require-team-r1': team, 'validating/require-owner': owner }, 'retired: no longer listed');
  handlers.replace([validating('require-owner', allow)], 'none', new Map([['validating/require-owner', owner]]));
  t.equal(handlers.withDefinition('validating', team), renamed[0], 'an earlier entry still served is found too');
});
