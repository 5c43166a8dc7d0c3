// Losing and regaining the Lease while the first registration is still slow must leave exactly one
// reconciler: seen from the API side, one watch per configuration and one write per restore.
import { COMMANDS } from '../src/commands/index.js';
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { BUNDLED_POLICY_FILE, loadConfig } from '../src/config/load-config.js';
import type { Config } from '../src/config/types.js';
import { loadPolicyOrThrow } from '../src/lifecycle/policy-reloader.js';
import { Registration } from '../src/registration/registration.js';
import { LOG_BASE } from '../src/lifecycle/logger.js';
import { readLogLine } from './support/logs/log-lines.js';
import { createCertificateAuthority, type RequestRecord } from '../local-cluster/fake-apiserver/index.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';
import { within } from './support/deadline.js';

const NS = 'kas';
const NAME = 'kube-admission-server';

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

/** A logger whose lines the test can await. */
function recordingLogger() {
  const lines: LogLine[] = [];
  const waiters: { match: (line: LogLine, index: number) => boolean; resolve: () => void }[] = [];
  const logger = pino({ level: 'info', base: LOG_BASE }, {
    write: (text: string) => {
      const line = (readLogLine(text, 'the in-process server') ?? JSON.parse(text)) as LogLine;
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line, lines.length - 1)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    },
  });
  /** Resolves when the `nth` line (1-based) with message `msg` has been logged. */
  const waitFor = (msg: string, nth = 1, timeoutMs = 15_000): Promise<void> => {
    const count = (): number => lines.filter((l) => l.msg === msg).length;
    if (count() >= nth) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${msg}" #${nth} within ${timeoutMs} ms; last: ${JSON.stringify(lines.slice(-4))}`)), timeoutMs);
      waiters.push({ match: () => count() >= nth, resolve: () => (clearTimeout(timer), resolve()) });
    });
  };
  return { logger, lines, waitFor };
}

async function configFor(t: Test, kubeconfig: string): Promise<Config> {
  const result = loadConfig(
    ['--kubeconfig', kubeconfig, '--namespace', NS, '--pod-name', 'kas-a', '--owner-cluster-role', NAME],
    { env: { LEASE_DURATION: '1500ms', LEASE_RENEW_DEADLINE: '1s', LEASE_RETRY_PERIOD: '200ms', RESYNC_PERIOD: '60s' }, readFile: () => undefined, exists: () => true, hostname: () => 'kas-a' }, COMMANDS,
  );
  if (result.kind !== 'run') throw new Error(`configuration: ${JSON.stringify(result)}`);
  t.ok(result.config.register, 'registers');
  return result.config;
}

const openWatches = (requests: readonly RequestRecord[], resource: string) => requests.filter((r) => r.verb === 'watch' && r.resource === resource && r.endedAt === undefined).length;

t.test('Lease lost and regained during a slow first registration: exactly one reconciler afterwards', async (t) => {
  const cluster = await startInProcessKube(t, NS);
  cluster.api.store.put('clusterroles', { metadata: { name: NAME }, rules: [] });
  const dir = await mkdtemp(join(tmpdir(), 'kas-one-reconciler-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cluster.api.writeKubeconfig(join(dir, 'kubeconfig'), { namespace: NS });
  const config = await configFor(t, join(dir, 'kubeconfig'));
  const { policy, webhooks } = await loadPolicyOrThrow(BUNDLED_POLICY_FILE, { ownNamespace: NS });
  const caPem = createCertificateAuthority('one-reconciler-ca').certPem;
  const { logger, waitFor } = recordingLogger();
  const registration = new Registration(config, cluster.kube, { caBundlePem: () => caPem, webhooks: () => webhooks, excludedNamespaces: () => policy.excludedNamespaces }, logger);
  const lifetime = new AbortController();
  t.teardown(() => lifetime.abort());

  // The first registration's reads take 3 s: long enough to lose and regain the Lease meanwhile.
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    cluster.api.faults.add({ resource, verb: 'get', name: NAME }, { latencyMs: 3000 }, { times: 1 });
  }
  const starting = registration.start(lifetime.signal);
  await waitFor('became the leader');
  await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'validatingwebhookconfigurations', { phase: 'started', timeoutMs: 10_000 });
  await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === 'mutatingwebhookconfigurations', { phase: 'started', timeoutMs: 10_000 });
  cluster.api.faults.add({ resource: 'leases', verb: 'update' }, { status: 503 });
  await waitFor('stopped being the leader');
  cluster.api.faults.clear();
  await waitFor('became the leader', 2);
  const role = await within(15_000, 'start() to settle', starting);
  t.ok(role === 'leader' || role === 'follower', `start() settled (${role})`);

  // Whatever the first registration was doing has ended: its slow reads are answered or cut.
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === resource, { phase: 'started', timeoutMs: 10_000 });
    await cluster.api.waitForRequest((r) => r.verb === 'get' && r.resource === resource && r.fault !== undefined, { timeoutMs: 10_000 });
  }
  // A stale term would start its reconciler right after its registration: give it time to show.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(openWatches(cluster.api.requests, 'validatingwebhookconfigurations'), 1, 'one watch on the validating configuration');
  t.equal(openWatches(cluster.api.requests, 'mutatingwebhookconfigurations'), 1, 'one watch on the mutating configuration');

  // A deleted configuration is restored by one reconciler: one create, no losing racer's 409.
  const deletedAt = performance.now();
  cluster.api.store.delete('validatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: 10_000 });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const creates = cluster.api.requests.filter((r) => r.verb === 'create' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > deletedAt);
  t.same(creates.map((r) => r.status), [201], 'restored with one create');

  lifetime.abort();
  registration.stopBackground();
  const closed = await cluster.api
    .waitForRequest(() => openWatches(cluster.api.requests, 'validatingwebhookconfigurations') + openWatches(cluster.api.requests, 'mutatingwebhookconfigurations') === 0, { timeoutMs: 10_000 })
    .then(() => true, () => false);
  t.ok(closed, 'the watches close once the lifetime ends');
});
