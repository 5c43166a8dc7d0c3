// kubectl against the Kubernetes API test double (what `npm run fake-apiserver` serves): discovery,
// server-side printing, apply (client-side, with kubectl's default strict field validation),
// describe, delete, and custom resources stored generically once their CRD exists. No Pods run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { stringify } from 'yaml';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { describeResult, kubectlMissing, shellPath, runShell, type CommandResult } from './support/tools/kubectl.js';
import { certManagerCrds } from '../local-cluster/cluster/cert-manager/crds.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';

const missing = kubectlMissing();
if (missing) {
  t.fail(missing);
} else {
  // A managed offering's build string: kubectl reports it as the server's, minor "34+".
  const api = await startFakeApiServer({ version: 'v1.34.3-local.1' });
  const dir = await mkdtemp(join(tmpdir(), 'kubectl-double-'));
  t.teardown(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);
  const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const kubectl = (args: string): Promise<CommandResult> => runShell(`kubectl ${args}`, { cwd: repositoryRoot(), env, timeoutMs: 60_000 });
  const ok = async (t: Test, args: string): Promise<CommandResult> => {
    const result = await kubectl(args);
    t.equal(result.code, 0, result.code === 0 ? `kubectl ${args}` : describeResult(result));
    return result;
  };

  t.test('discovery: kubectl finds every kind the manifests use, with short names and scope', async (t) => {
    const empty = await ok(t, 'get validatingwebhookconfigurations');
    t.equal(empty.stderr.trim(), 'No resources found', 'the first command a new user types');
    const resources = (await ok(t, 'api-resources --no-headers')).stdout.split('\n').map((line) => line.trim().split(/\s+/));
    const find = (name: string): string[] | undefined => resources.find((row) => row[0] === name);
    t.same(find('pods'), ['pods', 'po', 'v1', 'true', 'Pod']);
    t.same(find('deployments'), ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment']);
    t.same(find('mutatingwebhookconfigurations'), ['mutatingwebhookconfigurations', 'admissionregistration.k8s.io/v1', 'false', 'MutatingWebhookConfiguration']);
    t.same(find('poddisruptionbudgets'), ['poddisruptionbudgets', 'pdb', 'policy/v1', 'true', 'PodDisruptionBudget']);
    t.same(find('clusterrolebindings'), ['clusterrolebindings', 'rbac.authorization.k8s.io/v1', 'false', 'ClusterRoleBinding']);
    const { serverVersion } = JSON.parse((await ok(t, 'version -o json')).stdout) as { serverVersion?: Record<string, string> };
    t.has(serverVersion, { major: '1', minor: '34+', gitVersion: 'v1.34.3-local.1' }, 'kubectl version reads /version');
  });

  t.test('apply -k manifests/base with kubectl defaults, again (unchanged), get, describe, delete -k', async (t) => {
    const first = await ok(t, 'apply -k manifests/base');
    t.equal(first.stdout.split('\n').filter((line) => line.endsWith(' created')).length, 10);
    const again = await ok(t, 'apply -k manifests/base');
    t.match(again.stdout, /deployment\.apps\/kube-admission-server unchanged/, 'a second apply patches nothing into the Deployment');
    const table = await ok(t, '-n kube-admission-server get deployment kube-admission-server');
    t.match(table.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nkube-admission-server\s+0\/2\s+0\s+0\s+\d+s\n$/, 'the server prints the Deployment table');
    const wide = await ok(t, '-n kube-admission-server get configmap,serviceaccount,service -o wide');
    t.match(wide.stdout, /service\/kube-admission-server\s+ClusterIP\s+10\.96\.\d+\.\d+\s+<none>\s+443\/TCP\s+\d+s\s+app\.kubernetes\.io\/component=webhook,app\.kubernetes\.io\/name=kube-admission-server/);
    const describe = await ok(t, '-n kube-admission-server describe deployment kube-admission-server');
    t.match(describe.stdout, /RollingUpdateStrategy:\s+0 max unavailable, 1 max surge/);
    t.match(describe.stdout, /POLICY_FILE:\s+\/etc\/kube-admission-server\/policy\/policy\.yaml/);
    const gone = await ok(t, 'delete -k manifests/base');
    // kubectl 1.35 adds " from <namespace> namespace" to a namespaced object's line.
    t.equal(gone.stdout.split('\n').filter((line) => / deleted( from \S+ namespace)?$/.test(line)).length, 10);
    t.equal((await kubectl('get namespace kube-admission-server')).code, 1);
  });

  t.test('kubectl get pages its Table in chunks (--chunk-size) and prints every row once', async (t) => {
    // Seeded: `kubectl create` sends protobuf, which the double does not read.
    for (const name of ['page-a', 'page-b', 'page-c']) api.store.createNamespace(name);
    const before = api.requests.length;
    const chunked = await ok(t, 'get namespaces --chunk-size=2 --no-headers');
    const names = chunked.stdout.trim().split('\n').map((line) => line.split(/\s+/)[0]);
    const all = api.store.list('namespaces').map((ns) => ns.metadata?.name ?? '');
    t.same([...names].sort(), [...all].sort(), 'every namespace, none twice');
    t.ok(all.length > 4, `more namespaces (${all.length}) than two pages hold`);
    const lists = api.requests.slice(before).filter((r) => r.verb === 'list' && r.resource === 'namespaces');
    t.equal(lists.length, Math.ceil(all.length / 2), 'one list call per chunk of two');
    t.ok(lists.slice(1).every((r) => r.path.includes('continue=')), 'each chunk after the first resumes with the continue token');
    await ok(t, 'delete namespace page-a page-b page-c');
  });

  t.test('strict field validation: a misspelt field fails the apply, as kube-apiserver refuses it', async (t) => {
    const file = join(dir, 'typo.yaml');
    await writeFile(file, stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typo', namespace: 'default' }, dataa: { a: 'b' } }));
    const refused = await kubectl(`apply -f ${file}`);
    t.equal(refused.code, 1);
    t.match(refused.stderr, /Error from server \(BadRequest\): error when creating ".*typo\.yaml": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dataa"/);
    const warned = await ok(t, `apply -f ${file} --validate=warn`);
    t.match(warned.stderr, /Warning: unknown field "dataa"/);
    await ok(t, 'delete configmap typo');
  });

  t.test('kubectl wait: a condition already met returns at once, one met later returns then (kubectl 1.35 watches with sendInitialEvents)', async (t) => {
    api.store.put('configmaps', { metadata: { name: 'waited', namespace: 'default' }, data: { phase: 'ready' } });
    const already = await ok(t, "wait --for=jsonpath='{.data.phase}'=ready configmap/waited --timeout=20s");
    t.match(already.stdout, /configmap\/waited condition met/);
    const later = kubectl("wait --for=jsonpath='{.data.phase}'=done configmap/waited --timeout=30s");
    await api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'configmaps', { phase: 'started' });
    api.store.put('configmaps', { metadata: { name: 'waited', namespace: 'default' }, data: { phase: 'done' } });
    const met = await later;
    t.equal(met.code, 0, describeResult(met));
    t.match(met.stdout, /configmap\/waited condition met/);
    const watches = api.requests.filter((r) => r.verb === 'watch' && r.resource === 'configmaps');
    t.ok(watches.some((r) => r.path.includes('sendInitialEvents=true')), `kubectl asked for a watch-list (${watches.map((r) => r.path).join(', ')})`);
    api.store.delete('configmaps', 'default', 'waited');
  });

  t.test('custom resources: cert-manager kinds are stored generically once their CRDs exist', async (t) => {
    const before = await kubectl('apply -k manifests/overlays/cert-manager --dry-run=server');
    t.equal(before.code, 1);
    t.match(before.stderr, /no matches for kind "Certificate" in version "cert-manager\.io\/v1"/, 'kubectl says what real clusters say without cert-manager');
    const crds = join(dir, 'crds.yaml');
    await writeFile(crds, certManagerCrds().map((crd) => stringify(crd)).join('---\n'));
    await ok(t, `apply -f ${crds}`);
    await ok(t, 'wait --for=condition=Established crd/certificates.cert-manager.io --timeout=30s');
    const applied = await ok(t, 'apply -k manifests/overlays/cert-manager');
    t.match(applied.stdout, /certificate\.cert-manager\.io\/kube-admission-server-serving-cert created/);
    const certificates = await ok(t, '-n kube-admission-server get certificates');
    t.match(certificates.stdout, /^NAME\s+READY\s+SECRET\s+AGE\n/, 'the CRD\'s printer columns');
    t.match(certificates.stdout, /kube-admission-server-serving-cert\s+kube-admission-server-serving-cert\s+\d+s/);
    const stored = JSON.parse((await ok(t, '-n kube-admission-server get certificate kube-admission-server-ca -o json')).stdout) as { spec: Record<string, unknown> };
    t.has(stored.spec, { isCA: true, secretName: 'kube-admission-server-ca', privateKey: { rotationPolicy: 'Never' } }, 'every field kept');
    await ok(t, 'delete -k manifests/overlays/cert-manager');
  });
}
