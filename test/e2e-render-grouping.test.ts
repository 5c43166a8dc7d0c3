/**
 * `render` prints the configurations as they would be registered, grouped as the policy says:
 * the bundled example's six entries as three webhooks (mutating; validating Fail; validating
 * Ignore), or six with `grouping: none`. The API double validates what it prints as
 * kube-apiserver would.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { validateWebhookConfiguration } from '../local-cluster/fake-apiserver/webhook-validation.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { ChildServer } from './support/server/child-server.js';

interface Rendered {
  kind: string;
  webhooks: { name: string; failurePolicy: string; timeoutSeconds: number; rules: unknown[]; clientConfig: { service: { path: string } } }[];
}

async function render(t: Test, grouping: string): Promise<Rendered[]> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-render-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const example = await readFile(join(repositoryRoot(), 'policies', 'example.yaml'), 'utf8');
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, example.replace('kind: Policy\n', `kind: Policy\ngrouping: ${grouping}\n`));
  const child = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--policy-file', policy, '--namespace', 'kas']);
  t.equal((await child.exit()).code, 0, child.stderr);
  const docs = parseAllDocuments(child.stdout).map((d) => d.toJS() as Rendered);
  for (const doc of docs) {
    t.same(validateWebhookConfiguration(doc as never, doc.kind === 'MutatingWebhookConfiguration'), [], `kube-apiserver takes the ${doc.kind}`);
  }
  return docs;
}

t.test('grouping auto: one webhook per kind of treatment, named by it, its path naming the entries', async (t) => {
  const [mutatingConfig, validatingConfig] = await render(t, 'auto');
  t.same(
    mutatingConfig!.webhooks.map((w) => [w.name, w.clientConfig.service.path, w.failurePolicy, w.timeoutSeconds]),
    [['mutating-ignore-t5.kube-admission-server.kas.svc', '/mutate/mutating-ignore-t5/default-labels.default-resources', 'Ignore', 5]],
  );
  t.same(
    validatingConfig!.webhooks.map((w) => [w.name, w.clientConfig.service.path, w.failurePolicy]),
    [
      ['validating-ignore-t5.kube-admission-server.kas.svc', '/validate/validating-ignore-t5/require-app-label.allowed-registries', 'Ignore'],
      ['validating-fail-t5.kube-admission-server.kas.svc', '/validate/validating-fail-t5/deny-privileged.deny-host-namespaces', 'Fail'],
    ],
    'the warn and audit rules fail open, the enforcing ones closed: two groups',
  );
});

t.test('grouping none: one webhook per entry, as before', async (t) => {
  const [mutatingConfig, validatingConfig] = await render(t, 'none');
  t.same(mutatingConfig!.webhooks.map((w) => w.clientConfig.service.path), ['/mutate/default-labels', '/mutate/default-resources']);
  t.same(validatingConfig!.webhooks.map((w) => w.clientConfig.service.path), ['/validate/require-app-label', '/validate/deny-privileged', '/validate/deny-host-namespaces', '/validate/allowed-registries']);
});
