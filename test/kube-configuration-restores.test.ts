import t from 'tap';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ConfigurationApi, WebhookConfiguration } from '../src/registration/configuration-api.js';
import { describeChanges } from '../src/registration/configuration-changes.js';
import { ensureConfiguration, RegistrationError, type RegisterResult } from '../src/registration/register.js';
import { createRegistrationMetrics } from '../src/registration/registration-metrics.js';
import { RestoreTracker } from '../src/registration/restore-tracker.js';
import { captureLogs } from './support/server/server-harness.js';

const hook = (name: string, failurePolicy: string, caBundle = 'QUJD'): Record<string, unknown> => ({
  name,
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  failurePolicy,
  clientConfig: { caBundle, service: { name: 'kas', namespace: 'ops', path: `/validate/${name}`, port: 443 } },
});
const configuration = (webhooks: Record<string, unknown>[], extra: { annotations?: Record<string, string>; resourceVersion?: string } = {}): WebhookConfiguration =>
  ({ metadata: { name: 'kas', resourceVersion: extra.resourceVersion ?? '1', ...(extra.annotations ? { annotations: extra.annotations } : {}) }, webhooks }) as unknown as WebhookConfiguration;

/** A one-object API with a resourceVersion that moves on every write, like kube-apiserver's. */
function memoryApi(initial: WebhookConfiguration | undefined): ConfigurationApi & { stored: () => WebhookConfiguration | undefined; writes: number } {
  let stored = initial;
  let version = 10;
  const api = {
    kind: 'validating' as const,
    resource: 'validatingwebhookconfigurations' as const,
    collectionPath: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    writes: 0,
    stored: () => stored,
    read: async () => structuredClone(stored),
    create: async (body: WebhookConfiguration) => write(body),
    replace: async (body: WebhookConfiguration) => write(body),
    delete: async () => 'deleted' as const,
  };
  function write(body: WebhookConfiguration): WebhookConfiguration {
    api.writes++;
    stored = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++version) } };
    return structuredClone(stored);
  }
  return api;
}

const options = { signal: AbortSignal.timeout(5_000), logger: pino({ level: 'silent' }), install: { service: { name: 'kas', namespace: 'ops' } } };

t.test('describeChanges names each field that a restore puts back, short values shown, long ones cut', async (t) => {
  const desired = configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]);
  t.same(describeChanges(desired, undefined), ['the configuration was absent; created']);
  const edited = configuration([hook('deny', 'Ignore', 'R0FSQkFHRQ=='), hook('gone', 'Fail')]);
  const changes = describeChanges(desired, edited);
  t.same(changes, [
    'webhooks[deny].clientConfig.caBundle: "R0FSQkFHRQ==" -> "QUJD"',
    'webhooks[deny].failurePolicy: "Ignore" -> "Fail"',
    'webhooks[labels]: absent -> added',
    'webhooks[gone]: removed',
  ]);
  const long = 'x'.repeat(200);
  const [line] = describeChanges(configuration([hook('deny', 'Fail', long)]), configuration([hook('deny', 'Fail')]));
  t.ok(line!.length < 200 && line!.includes('…'), `a long value is cut: ${line}`);
  t.same(describeChanges(desired, desired), [], 'nothing differs, nothing listed');
});

t.test('the unmanaged annotation makes ensureConfiguration leave the live object alone, a hand-set Ignore included', async (t) => {
  const desired = configuration([hook('deny', 'Fail')]);
  const api = memoryApi(configuration([hook('deny', 'Ignore')], { annotations: { 'kube-admission-server.io/unmanaged': 'true' } }));
  const left = await ensureConfiguration(api, desired, options);
  t.equal(left.outcome, 'unmanaged');
  t.equal(api.writes, 0, 'nothing written');
  t.equal((api.stored()?.webhooks?.[0] as { failurePolicy: string }).failurePolicy, 'Ignore');

  const other = memoryApi(configuration([hook('deny', 'Ignore')], { annotations: { 'kube-admission-server.io/unmanaged': 'yes' } }));
  t.equal((await ensureConfiguration(other, desired, options)).outcome, 'updated', 'only "true" counts');
  t.equal((other.stored()?.webhooks?.[0] as { failurePolicy: string }).failurePolicy, 'Fail');
});

t.test('restores are told from the leader’s own updates, counted and logged with what changed', async (t) => {
  const registry = new Registry();
  const logs = captureLogs();
  const tracker = new RestoreTracker(logs.logger, createRegistrationMetrics(registry));
  const api = memoryApi(undefined);
  const ensure = async (desired: WebhookConfiguration): Promise<RegisterResult> => {
    const result = await ensureConfiguration(api, desired, options);
    tracker.observe('validating', result);
    return result;
  };
  const restores = async () => (await registry.getSingleMetric('kube_admission_configuration_restores_total')!.get()).values.find((v) => v.labels['kind'] === 'validating')?.value;

  t.equal((await ensure(configuration([hook('deny', 'Fail')]))).outcome, 'created');
  t.equal(await restores(), 0, 'the first registration is no restore');
  t.equal((await ensure(configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]))).outcome, 'updated');
  t.equal(await restores(), 0, 'a new policy from the leader is no restore');
  t.match(logs.lines.at(-1), { msg: 'webhook configuration updated', changes: ['webhooks[labels]: absent -> added'] });

  // Someone else edits it: the next pass restores it.
  const live = api.stored()!;
  (live.webhooks![0] as { failurePolicy: string }).failurePolicy = 'Ignore';
  await api.replace(live, options.signal);
  t.equal((await ensure(configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]))).outcome, 'updated');
  t.equal(await restores(), 1, 'counted');
  t.match(logs.lines.at(-1), { level: 40, msg: 'webhook configuration restored: it was changed by someone else', kind: 'validating', changes: ['webhooks[deny].failurePolicy: "Ignore" -> "Fail"'] });

  // Marked unmanaged: left alone, the gauge says so; unmarked: restored, counted again.
  const marked = api.stored()!;
  marked.metadata!.annotations = { 'kube-admission-server.io/unmanaged': 'true' };
  (marked.webhooks![0] as { failurePolicy: string }).failurePolicy = 'Ignore';
  await api.replace(marked, options.signal);
  t.equal((await ensure(configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]))).outcome, 'unmanaged');
  const unmanaged = async () => (await registry.getSingleMetric('kube_admission_configuration_unmanaged')!.get()).values.find((v) => v.labels['kind'] === 'validating')?.value;
  t.equal(await unmanaged(), 1);
  t.match(logs.lines.at(-1), { level: 40, msg: /left alone until the annotation is removed/ });
  const unmarked = api.stored()!;
  delete unmarked.metadata!.annotations;
  await api.replace(unmarked, options.signal);
  await ensure(configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]));
  t.equal(await unmanaged(), 0);
  t.equal(await restores(), 2, 'the hand-set Ignore is restored once the annotation is gone');

  tracker.startTerm();
  const edited = api.stored()!;
  (edited.webhooks![0] as { failurePolicy: string }).failurePolicy = 'Ignore';
  await api.replace(edited, options.signal);
  await ensure(configuration([hook('deny', 'Fail'), hook('labels', 'Ignore')]));
  t.equal(await restores(), 2, 'a new term counts nothing it has not seen as desired itself');

  tracker.observe('mutating', new RegistrationError('mutating', new Error('503')));
  const failures = (await registry.getSingleMetric('kube_admission_registration_errors_total')!.get()).values;
  t.same(
    failures.map((v) => [v.labels['kind'], v.value]).sort(),
    [
      ['mutating', 1],
      ['validating', 0],
    ],
  );
});
