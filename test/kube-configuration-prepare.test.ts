import t from 'tap';
import { pino } from 'pino';
import type { ConfigurationApi, WebhookConfiguration } from '../src/registration/configuration-api.js';
import { configurationDiffers, mergeForUpdate } from '../src/registration/configuration-diff.js';
import { ensureConfiguration } from '../src/registration/register.js';

const KEY = 'kube-admission-server/retired-cas';
const configuration = (annotations?: Record<string, string>, caBundle = 'QQ=='): WebhookConfiguration => ({
  metadata: { name: 'hook', resourceVersion: '7', ...(annotations ? { annotations } : {}) },
  webhooks: [{ name: 'a.hook.ops.svc', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { caBundle, service: { name: 'hook', namespace: 'ops' } } }],
});

t.test('an annotation of ours that differs is a difference; annotations of others are not', async (t) => {
  t.ok(configurationDiffers(configuration({ [KEY]: '{"x":"1"}' }), configuration({ [KEY]: '{}' })));
  t.ok(configurationDiffers(configuration({ [KEY]: '{}' }), configuration()), 'missing on the live object');
  t.notOk(configurationDiffers(configuration({ [KEY]: '{}' }), configuration({ [KEY]: '{}', 'someone/else': 'x' })));
});

t.test('an update keeps the annotations of others and sets ours', async (t) => {
  const merged = mergeForUpdate(configuration({ [KEY]: '{"x":"1"}' }), configuration({ [KEY]: '{}', 'someone/else': 'x' }));
  t.same(merged.metadata?.annotations, { [KEY]: '{"x":"1"}', 'someone/else': 'x' });
  t.equal(merged.metadata?.resourceVersion, '7', 'optimistic concurrency kept');
});

t.test('prepare sees the live configuration, and what it returns is what gets written', async (t) => {
  let stored: WebhookConfiguration | undefined = configuration({ [KEY]: '{}' }, 'T0xE');
  const seen: (WebhookConfiguration | undefined)[] = [];
  const writes: WebhookConfiguration[] = [];
  const api: ConfigurationApi = {
    kind: 'validating',
    resource: 'validatingwebhookconfigurations',
    collectionPath: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    read: async () => stored,
    create: async (body) => (stored = body),
    replace: async (body) => {
      writes.push(body);
      return (stored = body);
    },
    delete: async () => 'deleted',
  };
  const prepare = (desired: WebhookConfiguration, actual: WebhookConfiguration | undefined): WebhookConfiguration => {
    seen.push(actual);
    const previous = actual?.webhooks?.[0]?.clientConfig.caBundle ?? '';
    return { ...desired, webhooks: desired.webhooks?.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: `${w.clientConfig.caBundle}+${previous}` } })) } as WebhookConfiguration;
  };
  const options = { signal: AbortSignal.timeout(5_000), logger: pino({ level: 'silent' }), install: { service: { name: 'hook', namespace: 'ops' } }, prepare };
  t.equal((await ensureConfiguration(api, configuration({ [KEY]: '{}' }, 'TkVX'), options)).outcome, 'updated');
  t.equal(seen[0]?.webhooks?.[0]?.clientConfig.caBundle, 'T0xE', 'prepare got the live object');
  t.equal(writes[0]?.webhooks?.[0]?.clientConfig.caBundle, 'TkVX+T0xE', 'its result was written');
  stored = undefined;
  t.equal((await ensureConfiguration(api, configuration({ [KEY]: '{}' }, 'TkVX'), options)).outcome, 'created');
  t.equal(seen[1], undefined, 'nothing live: prepare is told so');
  t.equal((stored as WebhookConfiguration | undefined)?.webhooks?.[0]?.clientConfig.caBundle, 'TkVX+', 'and its result is created');
});
