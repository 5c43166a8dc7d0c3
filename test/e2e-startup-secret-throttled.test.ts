// Generate mode reads (and creates) its CA Secret before it can serve: a burst of 429s with
// Retry-After and 5xx on exactly that request (API Priority and Fairness shedding this client, an
// apiserver restarting) must not end the pod. It stays up and not Ready, waits at least what the
// API asked between attempts, and becomes Ready once the API answers (chaos seed 103, I5).
// Compiled server, API double.
import t from 'tap';
import { generatedSecretName } from '../src/tls/secret-api.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';

const SECRET = generatedSecretName(NAME);
const RETRY_AFTER_S = 1;
/** More than the six quick attempts (about 3 s) the start used to make before it exited 1. */
const THROTTLED = 7;
const FAILED = 3;

async function readiness(healthPort: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) })).status;
}

t.test('429s with Retry-After, then 5xx, on the generated Secret read at start: up and not Ready, waited out, then Ready', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const match = { resource: 'secrets', verb: 'get', namespace: NAMESPACE, name: SECRET } as const;
  cluster.api.faults.add(match, { status: 429, retryAfterSeconds: RETRY_AFTER_S }, { times: THROTTLED });
  cluster.api.faults.add(match, { status: 503 }, { times: FAILED });
  const replica = cluster.spawnReplica(t, 'kas-a');

  // The health listener is up while the Secret cannot be read yet (a startupProbe sees a live process).
  const health = await replica.child.waitForMessage('health server listening', STARTUP_MS);
  const healthPort = Number(health['port']);
  t.equal(await readiness(healthPort), 503, 'not Ready while the Secret cannot be read');

  await replica.child.waitForMessage('ready', STARTUP_MS);
  t.equal(replica.child.process.exitCode, null, 'still running');
  t.equal(await readiness(healthPort), 200, 'Ready once the API answers');

  const reads = cluster.api.requests.filter((r) => r.resource === 'secrets' && r.verb === 'get' && r.name === SECRET);
  const faulted = reads.filter((r) => r.status === 429 || r.status === 503);
  t.equal(faulted.length, THROTTLED + FAILED, 'every injected failure was met and retried');
  const throttled = reads.filter((r) => r.status === 429);
  for (let i = 1; i < throttled.length; i++) {
    const gapMs = throttled[i]!.startedAt - throttled[i - 1]!.endedAt!;
    // Retry-After is whole seconds; the server waits at least that (a little timer slack allowed).
    t.ok(gapMs >= RETRY_AFTER_S * 1000 - 50, `attempt ${i + 1} waited ${Math.round(gapMs)} ms after a 429 asking for ${RETRY_AFTER_S} s`);
  }
  t.ok(replica.child.logs.some((l) => l.msg === 'the generated TLS material could not be read or written yet; retrying'), 'each wait is logged');
  t.ok(cluster.api.store.get('secrets', NAMESPACE, SECRET), 'the Secret was created once the API answered');
  t.equal((await replica.child.stop()).code, 0);
});

t.test('403 on the generated Secret read at start: exits 1 at once, naming the Secret and the missing right', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add({ resource: 'secrets', verb: 'get', namespace: NAMESPACE, name: SECRET }, { status: 403 });
  const replica = cluster.spawnReplica(t, 'kas-a');
  const exit = await replica.child.exit(STARTUP_MS);
  t.equal(exit.code, 1);
  const failed = replica.child.logs.find((l) => l.msg === 'startup failed; shutting down');
  t.match(failed, { error: new RegExp(`Secret ${NAMESPACE}/${SECRET}.*403`) }, 'the error names the Secret and the refusal');
});

t.test('the first registration throttled past its quick retries: waited out (Retry-After honoured), then registered and Ready', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  // More than the eight attempts the first registration used to make before the start failed.
  const times = 10;
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'create' }, { status: 429, retryAfterSeconds: RETRY_AFTER_S }, { times });
  const replica = await cluster.startReplica(t, 'kas-a');
  const creates = cluster.api.requests.filter((r) => r.resource === 'validatingwebhookconfigurations' && r.verb === 'create');
  t.equal(creates.filter((r) => r.status === 429).length, times, 'every 429 was met');
  for (let i = 1; i < creates.length; i++) {
    const gapMs = creates[i]!.startedAt - creates[i - 1]!.endedAt!;
    t.ok(gapMs >= RETRY_AFTER_S * 1000 - 50, `create ${i + 1} waited ${Math.round(gapMs)} ms after a 429 asking for ${RETRY_AFTER_S} s`);
  }
  t.ok(cluster.configuration('validating'), 'registered');
  t.equal(await readiness(replica.healthPort), 200);
  t.equal((await replica.child.stop()).code, 0);
});
