// The teardown deletes a configuration only as the object it read and checked: one replaced
// between that read and the DELETE (another install took the name meanwhile) is not deleted.
// kube-apiserver answers the DELETE's preconditions (uid, resourceVersion) with 409; the
// teardown reads again and checks again. Against the API double over real HTTPS.
import t from 'tap';
import { pino } from 'pino';
import { configurationApis } from '../src/registration/configuration-api.js';
import { heldElsewhere } from '../src/registration/configuration-holder.js';
import { deleteWebhookConfigurations, type DeletionCheck } from '../src/registration/teardown.js';
import { NAME } from './support/kube/cluster-harness.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';
import { seedOtherInstallsConfiguration } from './support/kube/write-audit.js';

const NAMESPACE = 'kas';
const INSTALL = { service: { name: NAME, namespace: NAMESPACE } };

t.test('a configuration replaced between the read and the DELETE is not deleted: 409, read again, kept', async (t) => {
  const cluster = await startInProcessKube(t, NAMESPACE);
  const validating = configurationApis(cluster.kube).filter((api) => api.kind === 'validating');
  cluster.api.store.put('validatingwebhookconfigurations', {
    metadata: { name: NAME, labels: { 'app.kubernetes.io/managed-by': 'kube-admission-server' } },
    webhooks: [{ name: `deny.${NAME}.${NAMESPACE}.svc`, admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { service: { name: NAME, namespace: NAMESPACE, path: '/validate/deny' } } }],
  });
  let other: ReturnType<typeof seedOtherInstallsConfiguration> | undefined;
  // The first check allows what it read, and another install writes its own right after it.
  const check: DeletionCheck = (_kind, live) => {
    const why = heldElsewhere(live, INSTALL);
    other ??= seedOtherInstallsConfiguration(cluster.api.store);
    return why === undefined ? undefined : `not this install's: ${why}`;
  };
  const steps = await deleteWebhookConfigurations(validating, NAME, { signal: AbortSignal.timeout(10_000), logger: pino({ level: 'silent' }), deadlineMs: 5000, check });

  t.match(steps, [{ kind: 'validating', outcome: 'kept', why: /^not this install's: its webhook deny-privileged\.kube-admission-server\.other-install\.svc calls service other-install\/kube-admission-server$/ }]);
  t.same(cluster.api.store.get('validatingwebhookconfigurations', undefined, NAME), other, "the other install's object is as it wrote it");
  t.same(
    cluster.api.requests.filter((r) => r.resource === 'validatingwebhookconfigurations').map((r) => `${r.verb} ${r.status}`),
    ['get 200', 'delete 409', 'get 200'],
    'the DELETE named the object read, and was refused for it',
  );
});
