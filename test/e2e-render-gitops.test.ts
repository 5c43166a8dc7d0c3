// `render` for GitOps, through the compiled CLI in a working directory of its own: with no
// --namespace it renders for the namespace the shipped manifests install into (the webhooks'
// Service, the namespace every selector exempts, a native entry's params ConfigMap), and it
// leaves no key material behind unless --cert-dir (or CERT_DIR) says where: an existing ./certs
// is only read. The certificates are judged by node's X509Certificate.
import { X509Certificate } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { ChildServer } from './support/server/child-server.js';
import { tempDir } from './support/tools/tool-runner.js';
import { maxReplicasPolicy } from './support/policy/policy-text.js';

const SHIPPED_NAMESPACE = 'kube-admission-server'; // manifests/base/kustomization.yaml
const THROWAWAY_WARNING = /the caBundle is of a CA made for this render and kept nowhere/;

type Selector = { matchExpressions?: { key: string; operator: string; values: string[] }[] };
type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string };
  webhooks?: { namespaceSelector: Selector; clientConfig: { caBundle: string; service: { namespace: string } } }[];
  spec?: { matchConstraints?: { namespaceSelector: Selector }; paramRef?: { namespace: string } };
};

/** The names a selector's NotIn on kubernetes.io/metadata.name exempts. */
const exempted = (selector: Selector | undefined): string[] =>
  (selector?.matchExpressions ?? []).filter((e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn').flatMap((e) => e.values);

async function render(t: Test, cwd: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<{ docs: Doc[]; stderr: string }> {
  const policy = join(await tempDir(t, 'kas-render-policy-'), 'policy.yaml');
  await writeFile(policy, maxReplicasPolicy('native'));
  const child = new ChildServer(['render', '--policy-file', policy, ...args], env, cwd);
  const { code } = await child.exit();
  t.equal(code, 0, `render exits 0: ${child.stderr}`);
  return { docs: parseAllDocuments(child.stdout).map((d) => d.toJS() as Doc), stderr: child.stderr };
}

const caBundles = (docs: readonly Doc[]): string[] => docs.flatMap((d) => (d.webhooks ?? []).map((w) => Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8')));

/** Every file under `dir` with its content and modification time. */
async function snapshot(dir: string): Promise<Record<string, { text: string; mtimeMs: number; mode: number }>> {
  const entries: Record<string, { text: string; mtimeMs: number; mode: number }> = {};
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const path = join(dir, name);
    const info = await stat(path);
    if (info.isFile()) entries[name] = { text: await readFile(path, 'utf8'), mtimeMs: info.mtimeMs, mode: info.mode & 0o777 };
  }
  return entries;
}

t.test('no --namespace and no --cert-dir: rendered for the shipped namespace, and nothing written to the working directory', async (t) => {
  const cwd = await tempDir(t, 'kas-render-cwd-');
  const { docs, stderr } = await render(t, cwd);
  t.same(await readdir(cwd), [], 'the working directory is as empty as before: no ./certs, no key');

  const webhooks = docs.flatMap((d) => d.webhooks ?? []);
  t.ok(webhooks.length > 0, 'webhooks rendered');
  for (const webhook of webhooks) {
    t.equal(webhook.clientConfig.service.namespace, SHIPPED_NAMESPACE, 'the Service of the shipped manifests');
    t.ok(exempted(webhook.namespaceSelector).includes(SHIPPED_NAMESPACE), 'the own namespace is exempt');
    t.notOk(exempted(webhook.namespaceSelector).includes('default'), 'default is intercepted like any namespace');
  }
  const params = docs.find((d) => d.kind === 'ConfigMap');
  t.equal(params?.metadata.namespace, SHIPPED_NAMESPACE, "the native entry's params ConfigMap lands in the shipped namespace");
  const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy');
  t.same(exempted(policy?.spec?.matchConstraints?.namespaceSelector).includes('default'), false, 'the native policy does not exempt default');
  t.ok(exempted(policy?.spec?.matchConstraints?.namespaceSelector).includes(SHIPPED_NAMESPACE), 'it exempts the shipped namespace');
  t.equal(docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding')?.spec?.paramRef?.namespace, SHIPPED_NAMESPACE, 'the binding reads its params there');

  const [bundle] = new Set(caBundles(docs));
  t.ok(bundle && new X509Certificate(bundle).ca, 'the caBundle is a CA certificate');
  t.match(stderr, THROWAWAY_WARNING, 'and stderr says it is of a CA kept nowhere');
});

t.test('no --cert-dir: a CA already in ./certs is used, and the directory is left exactly as it was', async (t) => {
  const cwd = await tempDir(t, 'kas-render-cwd-');
  await render(t, cwd, ['--cert-dir', 'certs']);
  const before = await snapshot(join(cwd, 'certs'));
  t.ok(before['ca.key'] && before['tls.key'], 'told where (--cert-dir), render keeps the CA and key there');
  t.equal(before['ca.key']?.mode, 0o600, 'the key 0600');

  const { docs, stderr } = await render(t, cwd);
  t.same(await snapshot(join(cwd, 'certs')), before, 'every file unchanged, none added (contents and modification times)');
  t.same(await readdir(cwd), ['certs'], 'nothing else written');
  t.same([...new Set(caBundles(docs))], [before['ca-bundle.crt']?.text], 'the caBundle is the one in ./certs');
  t.notMatch(stderr, THROWAWAY_WARNING);
});

t.test('CERT_DIR names the directory as --cert-dir does: the material is kept there', async (t) => {
  const cwd = await tempDir(t, 'kas-render-cwd-');
  const { docs } = await render(t, cwd, [], { CERT_DIR: 'kept' });
  const kept = await snapshot(join(cwd, 'kept'));
  t.same([...new Set(caBundles(docs))], [kept['ca-bundle.crt']?.text], 'the caBundle is of the CA kept in CERT_DIR');
  t.same(await readdir(cwd), ['kept']);
});
