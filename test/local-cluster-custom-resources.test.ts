// kubectl against the local cluster (three kube-apiservers, one of them lagging) with the report
// CRDs the repository ships (manifests/crds): installed, Established, listed empty, a Report
// created, printed with its columns, updated, refused by its schema in kube-apiserver's words,
// pruned of unknown fields, watched appearing and going, read in another served version, and the
// CRDs deleted with their objects. What kubectl prints is kubectl's own formatting of the API's
// answers.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { stringify } from 'yaml';
import { startLocalCluster } from '../local-cluster/cluster/index.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { caughtUp } from './support/kube/custom-resources.js';
import { describeResult, kubectlMissing, runShell, shellPath, startShell, type CommandResult } from './support/tools/kubectl.js';

const LAG_MS = 1000;
const missing = kubectlMissing();
if (missing) {
  t.fail(missing);
} else {
  const dir = await mkdtemp(join(tmpdir(), 'local-custom-resources-'));
  const cluster = await startLocalCluster({ dir, certManager: false, apiservers: [{}, {}, { lagMs: LAG_MS }], log: (message) => t.comment(message) });
  t.teardown(async () => {
    await cluster.close(2);
    await rm(dir, { recursive: true, force: true });
  });
  const { api } = cluster;
  const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: cluster.kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const kubectl = (args: string, extraEnv: Record<string, string> = {}): Promise<CommandResult> =>
    runShell(`kubectl ${args}`, { cwd: repositoryRoot(), env: { ...env, ...extraEnv }, timeoutMs: 60_000 });
  const ok = async (t: Test, args: string): Promise<CommandResult> => {
    const result = await kubectl(args);
    t.equal(result.code, 0, result.code === 0 ? `kubectl ${args}` : describeResult(result));
    return result;
  };
  /** Every kube-apiserver's cache holds what the store holds: kubectl's next connection may reach any of them. */
  const settled = async (): Promise<void> => {
    for (const apiserver of api.apiservers) await caughtUp(apiserver, LAG_MS * 5);
  };
  const file = async (name: string, object: KubeObject): Promise<string> => {
    const path = join(dir, `${name}.yaml`);
    await writeFile(path, stringify(object));
    return path;
  };
  const report = (name: string, extra: Record<string, unknown>): KubeObject => ({ apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name, namespace: 'default' }, ...extra });
  const failing = { scope: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default' }, summary: { pass: 2, fail: 1, warn: 0, error: 0, skip: 0 }, results: [{ policy: 'require-team-label', result: 'fail', message: 'label team is missing' }] };

  t.test('kubectl apply -k manifests/crds: four CRDs, Established; kubectl get reports -A and get clusterreports answer empty', async (t) => {
    const applied = await ok(t, 'apply -k manifests/crds');
    t.same(applied.stdout.trim().split('\n').sort(), [
      'customresourcedefinition.apiextensions.k8s.io/clusterpolicyreports.wgpolicyk8s.io created',
      'customresourcedefinition.apiextensions.k8s.io/clusterreports.openreports.io created',
      'customresourcedefinition.apiextensions.k8s.io/policyreports.wgpolicyk8s.io created',
      'customresourcedefinition.apiextensions.k8s.io/reports.openreports.io created',
    ]);
    const established = await ok(t, 'wait --for=condition=Established crd/reports.openreports.io crd/clusterreports.openreports.io crd/policyreports.wgpolicyk8s.io crd/clusterpolicyreports.wgpolicyk8s.io --timeout=30s');
    t.equal(established.stdout.trim().split('\n').filter((line) => line.endsWith('condition met')).length, 4);
    await settled();
    const resources = (await ok(t, 'api-resources --api-group=openreports.io --no-headers')).stdout.trim().split('\n').map((line) => line.trim().split(/\s+/));
    t.same(resources, [
      ['clusterreports', 'creps', 'openreports.io/v1alpha1', 'false', 'ClusterReport'],
      ['reports', 'reps', 'openreports.io/v1alpha1', 'true', 'Report'],
    ]);
    for (const args of ['get reports -A', 'get clusterreports']) {
      const empty = await ok(t, args);
      t.equal(empty.stderr.trim(), 'No resources found', `kubectl ${args}`);
    }
  });

  t.test('a Report: created, listed with the CRD\'s printer columns, updated (a new generation), deleted', async (t) => {
    const path = await file('web', report('web', failing));
    t.match((await ok(t, `apply -f ${path}`)).stdout, /^report\.openreports\.io\/web created$/m);
    const table = await ok(t, 'get reports -A');
    t.match(table.stdout, /^NAMESPACE\s+NAME\s+PASS\s+FAIL\s+WARN\s+ERROR\s+SKIP\s+AGE\ndefault\s+web\s+2\s+1\s+0\s+0\s+0\s+\d+s\n$/);
    const wide = await ok(t, 'get reports -A -o wide');
    t.match(wide.stdout, /^NAMESPACE\s+NAME\s+KIND\s+NAME\s+PASS\s+FAIL\s+WARN\s+ERROR\s+SKIP\s+AGE\ndefault\s+web\s+Deployment\s+web\s+2\s+1/, 'the priority-1 columns with -o wide');
    const fixed = await file('web', report('web', { ...failing, summary: { pass: 3, fail: 0, warn: 0, error: 0, skip: 0 }, results: [] }));
    t.match((await ok(t, `apply -f ${fixed}`)).stdout, /^report\.openreports\.io\/web configured$/m);
    t.equal((await ok(t, "get report web -o jsonpath='{.metadata.generation} {.summary.fail}'")).stdout, '2 0');
    t.match((await ok(t, 'delete report web')).stdout, /^report\.openreports\.io "web" deleted/m);
    t.equal(api.store.get('reports.openreports.io', 'default', 'web'), undefined);
    const cluster = await file('cluster', { apiVersion: 'openreports.io/v1alpha1', kind: 'ClusterReport', metadata: { name: 'nodes' }, summary: { pass: 1, fail: 0, warn: 0, error: 0, skip: 0 } });
    await ok(t, `apply -f ${cluster}`);
    t.match((await ok(t, 'get clusterreports')).stdout, /^NAME\s+PASS\s+FAIL\s+WARN\s+ERROR\s+SKIP\s+AGE\nnodes\s+1\s+0\s+0\s+0\s+0\s+\d+s\n$/);
    await ok(t, 'delete clusterreport nodes');
  });

  t.test('the schema: a violation is refused with kube-apiserver\'s 422, an unknown field by kubectl\'s strict default', async (t) => {
    const invalid = await file('invalid', report('invalid', { results: [{ policy: 'p', result: 'failed' }] }));
    const refused = await kubectl(`apply -f ${invalid}`);
    t.equal(refused.code, 1);
    t.equal(refused.stderr.trim(), 'The Report "invalid" is invalid: results[0].result: Unsupported value: "failed": supported values: "pass", "fail", "warn", "error", "skip"');
    const unknown = await file('unknown', report('unknown', { spec: { note: 'not in the schema' }, summary: { pass: 1 } }));
    const strict = await kubectl(`apply -f ${unknown}`);
    t.equal(strict.code, 1);
    t.match(strict.stderr, /Error from server \(BadRequest\): error when creating ".*unknown\.yaml": Report in version "v1alpha1" cannot be handled as a Report: strict decoding error: unknown field "spec"/);
    const warned = await ok(t, `apply -f ${unknown} --validate=warn`);
    t.match(warned.stderr, /Warning: unknown field "spec"/);
    const stored = api.store.get('reports.openreports.io', 'default', 'unknown');
    t.same([stored?.spec, stored?.summary], [undefined, { pass: 1 }], 'pruned: only what the schema knows is stored');
    await ok(t, 'delete report unknown');
    t.equal(api.store.list('reports.openreports.io').length, 0, 'nothing refused was stored');
  });

  t.test('kubectl get --watch: a Report appears, changes and goes', async (t) => {
    const watch = startShell('kubectl get reports -A --watch --output-watch-events --no-headers', { cwd: repositoryRoot(), env, timeoutMs: 60_000 });
    t.teardown(() => void watch.stop());
    await api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'reports', { phase: 'started', timeoutMs: 30_000 });
    const path = await file('watched', report('watched', failing));
    await ok(t, `apply -f ${path}`);
    await ok(t, `patch report watched --type=merge -p '{"summary":{"fail":0,"pass":3}}'`);
    await ok(t, 'delete report watched');
    const lines = async (): Promise<string[]> => watch.output().trim().split('\n').filter((line) => line.includes('watched'));
    const started = performance.now();
    while ((await lines()).length < 3 && performance.now() - started < 20_000) await new Promise((resolve) => setTimeout(resolve, 50));
    const seen = (await lines()).map((line) => line.trim().split(/\s+/).slice(0, 5));
    t.same(seen, [
      ['ADDED', 'default', 'watched', '2', '1'],
      ['MODIFIED', 'default', 'watched', '3', '0'],
      ['DELETED', 'default', 'watched', '3', '0'],
    ]);
  });

  t.test('wgpolicyk8s.io: a PolicyReport written as v1alpha2 is listed by kubectl get polr and read back in each version', async (t) => {
    const path = await file('polr', { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReport', metadata: { name: 'deploy-web', namespace: 'default' }, summary: { pass: 0, fail: 1 } });
    await ok(t, `apply -f ${path}`);
    // Columns whose path finds nothing are empty cells (tableconvertor's nil).
    t.match((await ok(t, 'get polr -A')).stdout, /^NAMESPACE\s+NAME\s+PASS\s+FAIL\s+WARN\s+ERROR\s+SKIP\s+AGE\ndefault\s+deploy-web\s+0\s+1\s+\d+s\n$/);
    t.equal((await ok(t, "get policyreports.v1alpha2.wgpolicyk8s.io deploy-web -o jsonpath='{.apiVersion}'")).stdout, 'wgpolicyk8s.io/v1alpha2');
    t.equal((await ok(t, "get policyreports.v1beta1.wgpolicyk8s.io deploy-web -o jsonpath='{.apiVersion}'")).stdout, 'wgpolicyk8s.io/v1beta1', 'the preferred version kubectl reads by default');
  });

  t.test('kubectl delete -k manifests/crds: the CRDs go, their objects with them; then the resource type is unknown', async (t) => {
    await ok(t, `apply -f ${await file('last', report('last', failing))}`);
    const deleted = await ok(t, 'delete -k manifests/crds');
    t.equal(deleted.stdout.trim().split('\n').filter((line) => / deleted$/.test(line)).length, 4);
    t.equal(api.store.list('customresourcedefinitions').length, 0);
    t.notOk(api.store.types.has('reports.openreports.io'), 'the objects went with their CRD');
    await settled();
    const gone = await kubectl('get reports -A', { KUBECACHEDIR: join(dir, 'fresh-cache') });
    t.equal(gone.code, 1);
    t.match(gone.stderr, /the server doesn't have a resource type "reports"/);
  });
}
