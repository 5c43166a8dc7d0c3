import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ChildServer } from './support/server/child-server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// A compiled handler module whose handlers declare the RBAC their own API calls need.
const HANDLERS = `import { defineValidatingWebhook } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'index.js')).href)};
export const webhooks = [
  defineValidatingWebhook({ name: 'quota-check', kind: 'Deployment', handler: () => ({ allowed: true }),
    permissions: [
      { apiGroups: [''], resources: ['resourcequotas'], verbs: ['get', 'list'], reason: 'compares replicas with the quota' },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['quota-exceptions'], namespace: 'platform' },
    ] }),
  defineValidatingWebhook({ name: 'owner-check', kind: 'Pod', handler: () => ({ allowed: true }),
    permissions: [{ apiGroups: [''], resources: ['resourcequotas'], verbs: ['get', 'list'] }] }),
  defineValidatingWebhook({ name: 'plain', kind: 'Pod', handler: () => ({ allowed: true }) }),
];
`;

interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  rules?: unknown[];
  roleRef?: unknown;
  subjects?: unknown[];
  webhooks?: { name: string; clientConfig: { service: { path: string } } }[];
}

t.test('render --handlers adds the custom webhooks and the least RBAC their handlers declare', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-render-rbac-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'webhooks.js'), HANDLERS);
  const render = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--namespace', 'webhooks', '--handlers', join(dir, 'webhooks.js'), '--service-account', 'my-webhooks']);
  t.equal((await render.exit()).code, 0, render.stderr);
  const docs = parseAllDocuments(render.stdout).map((d) => d.toJS() as Doc);
  t.same(docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`), [
    'MutatingWebhookConfiguration//kube-admission-server',
    'ValidatingWebhookConfiguration//kube-admission-server',
    'ClusterRole//kube-admission-server-handlers',
    'ClusterRoleBinding//kube-admission-server-handlers',
    'Role/platform/kube-admission-server-handlers',
    'RoleBinding/platform/kube-admission-server-handlers',
  ]);
  const validating = docs[1]!;
  // Its own path, or (grouped, the default) a group's path naming it among the members: /validate/<group>/<a>.<b>.
  const routes = (path: string, name: string): boolean => path === `/validate/${name}` || (path.split('/')[3] ?? '').split('.').includes(name);
  for (const name of ['quota-check', 'owner-check', 'plain']) t.ok(validating.webhooks?.some((w) => routes(w.clientConfig.service.path, name)), `serves ${name}`);
  t.same(docs[2]!.rules, [{ apiGroups: [''], resources: ['resourcequotas'], verbs: ['get', 'list'] }], 'the same grant from two handlers appears once; nothing else cluster-wide');
  t.match(docs[2]!.metadata.annotations?.['kube-admission-server.io/granted-for'], /quota-check: get,list resourcequotas \(compares replicas with the quota\); owner-check: get,list resourcequotas/);
  t.same(docs[3]!.subjects, [{ kind: 'ServiceAccount', name: 'my-webhooks', namespace: 'webhooks' }]);
  t.same(docs[3]!.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kube-admission-server-handlers' });
  t.same(docs[4]!.rules, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['quota-exceptions'] }], 'a namespaced grant stays in its namespace');
  t.same(docs[5]!.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kube-admission-server-handlers' });
});

t.test('render without handlers that declare permissions renders no RBAC; a bad module exits 2', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-render-rbac-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const plain = new ChildServer(['render', '--cert-dir', join(dir, 'certs')]);
  t.equal((await plain.exit()).code, 0, plain.stderr);
  t.same(parseAllDocuments(plain.stdout).map((d) => (d.toJS() as Doc).kind), ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
  const broken = new ChildServer(['render', '--cert-dir', join(dir, 'certs'), '--handlers', join(dir, 'missing.js')]);
  t.equal((await broken.exit()).code, 2);
  t.match(broken.stderr, /missing\.js: cannot load the handler module/);
});

t.test('render --handler-rbac prints only that RBAC: a List kustomize takes, or the chart values', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kas-render-rbac-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'webhooks.js'), HANDLERS);
  const certs = join(dir, 'certs');
  const manifests = new ChildServer(['render', '--cert-dir', certs, '--namespace', 'webhooks', '--handlers', join(dir, 'webhooks.js'), '--handler-rbac', 'manifests']);
  t.equal((await manifests.exit()).code, 0, manifests.stderr);
  const list = parseAllDocuments(manifests.stdout).map((d) => d.toJS() as { kind: string; items: Doc[] });
  t.same(list.map((d) => d.kind), ['List'], 'one document: no configurations, which the server registers itself');
  t.same(list[0]!.items.map((d) => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`), [
    'ClusterRole//kube-admission-server-handlers',
    'ClusterRoleBinding//kube-admission-server-handlers',
    'Role/platform/kube-admission-server-handlers',
    'RoleBinding/platform/kube-admission-server-handlers',
  ]);
  t.same(list[0]!.items[1]!.subjects, [{ kind: 'ServiceAccount', name: 'kube-admission-server', namespace: 'webhooks' }]);

  const values = new ChildServer(['render', '--cert-dir', certs, '--handlers', join(dir, 'webhooks.js'), '--handler-rbac', 'values']);
  t.equal((await values.exit()).code, 0, values.stderr);
  t.same(parseAllDocuments(values.stdout).map((d) => d.toJS()), [
    {
      handlerRbac: {
        cluster: {
          rules: [{ apiGroups: [''], resources: ['resourcequotas'], verbs: ['get', 'list'] }],
          grantedFor: 'quota-check: get,list resourcequotas (compares replicas with the quota); owner-check: get,list resourcequotas',
        },
        namespaces: { platform: { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['quota-exceptions'] }], grantedFor: 'quota-check: get configmaps' } },
      },
    },
  ]);

  const wrong = new ChildServer(['render', '--handlers', join(dir, 'webhooks.js'), '--handler-rbac', 'helm']);
  t.equal((await wrong.exit()).code, 2);
  t.match(wrong.stderr, /--handler-rbac: "helm" is not one of manifests, values/);
  const alone = new ChildServer(['render', '--handler-rbac', 'values']);
  t.equal((await alone.exit()).code, 2);
  t.match(alone.stderr, /--handler-rbac needs --handlers MODULE/);
});
