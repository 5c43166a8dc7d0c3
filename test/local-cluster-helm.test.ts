// Helm against the local cluster, as a user runs it: `npm run local-cluster` (three kube-apiservers),
// then `helm install`, `helm upgrade` with a value changed (the Pods roll, under a steady admission
// load, and no webhook call fails), `helm rollback` and `helm uninstall` (nothing of the release is
// left). Helm's release storage writes its Secrets as protobuf, which the double decodes.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';

// Before anything heavy loads: the runner reads the comment and extends its deadline for this file.
t.setTimeout(900_000);
t.comment('timeout=900000');
const { startScenarioCluster } = await import('./support/cluster/local-cluster-scenario.js');
const { AdmissionLoad } = await import('../local-cluster/cluster/admission-load.js');
const { describeResult } = await import('./support/tools/kubectl.js');
const { EVENT_MS } = await import('./support/deadline.js');
const { requireTool } = await import('./support/tools/tools.js');

const NS = 'kube-admission-server';
const HELM = `helm --namespace ${NS}`;
/**
 * The kustomize install's names and the Try-it example's policy (deny-privileged enforced,
 * default-labels added), so that the admission load's expectations hold.
 */
const VALUES = join(tmpdir(), `helm-values-${process.pid}.yaml`);
const examplePolicy = parse(readFileSync(new URL('../examples/local-cluster/policy-with-default-labels.yaml', import.meta.url), 'utf8')) as { data: Record<string, string> };
writeFileSync(VALUES, stringify({ fullnameOverride: 'kube-admission-server', policy: parse(examplePolicy.data['policy.yaml'] ?? '') }));
t.teardown(() => rmSync(VALUES, { force: true }));
const RELEASE = `kas charts/kube-admission-server --values ${VALUES}`;
const WAIT = '--wait --timeout 5m';

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { containers: { env?: { name: string; value?: string }[] }[] };
  status: { conditions?: { type: string; status: string }[] };
}
const isReady = (pod: Pod): boolean => pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const logLevelOf = (pod: Pod): string | undefined => pod.spec.containers[0]?.env?.find((e) => e.name === 'LOG_LEVEL')?.value;

await t.test('helm install, upgrade, rollback and uninstall against npm run local-cluster', async (t) => {
  try {
    requireTool('helm');
  } catch (error) {
    t.fail((error as Error).message);
    return;
  }
  const context = await startScenarioCluster(t);
  if (!context) return;
  const { cluster, api, sh, json } = context;
  const succeeded = (result: Awaited<ReturnType<typeof sh>>): boolean => t.equal(result.code, 0, `${result.command}\n${result.code === 0 ? '' : describeResult(result)}`);
  // A terminating Pod stays Ready while it drains (its /readyz answers 200 until the server closes): not counted.
  const readyPods = async (): Promise<Pod[]> => (await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items.filter((p) => isReady(p) && !p.metadata.deletionTimestamp);
  const failedCalls = (): string[] => cluster.output.split('\n').filter((line) => line.includes('admission: failed calling webhook'));
  t.teardown(async () => {
    if (t.passing()) return;
    t.comment(`diagnostics:\n${describeResult(await sh(`kubectl -n ${NS} get deployments,replicasets,pods,secrets -o wide`, 30_000))}`);
    t.comment(`local cluster output (last 6000 characters):\n${cluster.output.slice(-6000)}`);
  });

  succeeded(await sh(`${HELM} install ${RELEASE} --create-namespace ${WAIT}`));
  succeeded(await sh('kubectl apply -f examples/local-cluster/namespace.yaml'));
  const installed = await readyPods();
  t.equal(installed.length, 2, 'two Pods ready');
  // A replica is Ready before the first registration (which waits for a ready endpoint): wait for it.
  const registered = async (): Promise<number> => (await json<{ items: unknown[] }>('kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -o json')).items.length;
  const registeredBy = Date.now() + EVENT_MS;
  while ((await registered()) < 2 && Date.now() < registeredBy) await new Promise((resolve) => setTimeout(resolve, 500));
  t.equal(await registered(), 2, 'both configurations registered');
  t.match((await sh(`kubectl -n ${NS} get secrets -l owner=helm -o name`)).stdout, /sh\.helm\.release\.v1\.kas\.v1/, "Helm's release Secret was stored (it came as protobuf)");

  const load = new AdmissionLoad(api, 'demo', 2);
  const failedBefore = failedCalls().length;
  let upgrade;
  let rollback;
  try {
    await load.answerAfter(0, EVENT_MS);
    upgrade = await sh(`${HELM} upgrade ${RELEASE} --set logLevel=debug ${WAIT}`);
    await sh(`kubectl -n ${NS} rollout status deployment/kube-admission-server --timeout=300s`);
    const upgraded = await readyPods();
    t.equal(upgraded.length, 2);
    t.notOk(upgraded.some((p) => installed.some((i) => i.metadata.uid === p.metadata.uid)), 'the upgrade rolled both Pods');
    t.same(upgraded.map(logLevelOf), ['debug', 'debug'], 'the new Pods run with the changed value');
    rollback = await sh(`${HELM} rollback kas 1 ${WAIT}`);
    await sh(`kubectl -n ${NS} rollout status deployment/kube-admission-server --timeout=300s`);
    const rolledBack = await readyPods();
    t.equal(rolledBack.length, 2);
    t.notOk(rolledBack.some((p) => upgraded.some((u) => u.metadata.uid === p.metadata.uid)), 'the rollback rolled both Pods again');
    t.same(rolledBack.map(logLevelOf), ['info', 'info'], 'the rollback restored the first revision');
    await load.answerAfter(Date.now(), EVENT_MS);
  } finally {
    await load.stop();
  }
  succeeded(upgrade!);
  succeeded(rollback!);
  const sent = load.report.sent.labelled + load.report.sent.unlabelled + load.report.sent.privileged;
  t.comment(`admission load through the upgrade and the rollback: ${sent} creates`);
  t.same(load.report.failures, [], 'every admission through the upgrade and the rollback answered as the policy says');
  t.same(failedCalls().slice(failedBefore), [], 'no webhook call failed (kube-apiserver would have logged it)');
  t.match((await sh(`${HELM} history kas -o json`)).stdout, /"revision":3.*"description":"Rollback to 1"/s, 'revision 3 is the rollback');

  succeeded(await sh(`${HELM} uninstall kas --wait --timeout 5m`));
  succeeded(await sh('kubectl delete -f examples/local-cluster/namespace.yaml --wait=false'));
  // The garbage collector removes the Pods after their Deployment and ReplicaSet; they stop on SIGTERM.
  succeeded(await sh(`kubectl -n ${NS} wait --for=delete pod -l app.kubernetes.io/name=kube-admission-server --timeout=180s`));
  // What the server created itself: the garbage collector deletes it once both its owners (the ClusterRole and the Deployment) are gone.
  succeeded(await sh(`kubectl -n ${NS} wait --for=delete secret/kube-admission-server-certs lease.coordination.k8s.io/kube-admission-server-leader --timeout=60s`));
  const left = (await sh(`kubectl -n ${NS} get all,secrets,configmaps,serviceaccounts,roles,rolebindings,leases,poddisruptionbudgets -o name`)).stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/kube-root-ca.crt') && !line.endsWith('serviceaccount/default'));
  t.same(left, [], `nothing of the release is left in ${NS}: no Pod, no release Secret (the purge's DeleteOptions come as protobuf), no generated CA Secret, no Lease`);
  t.match((await sh('kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations')).stderr, /^No resources found$/m, 'no webhook configuration left');
  t.match((await sh('kubectl get clusterroles,clusterrolebindings -o name')).stdout.split('\n').filter((l) => l.includes('kube-admission-server')).join('\n'), /^$/, 'no cluster-wide RBAC of the release left');
});
