/**
 * The install, run as a user runs it: `npm run local-cluster` (the compiled CLI), then the
 * README's "Try it" commands with kubectl against it, the manifests as shipped. Run by
 * test/local-cluster-install.test.ts for manifests/base and the cert-manager overlay.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { CLOSE_RACE, DEFAULTED_LABEL, DENIED_BY, admissionLoad, type LoadFailure, type LoadReport } from './support/local-cluster/admission-load.js';
import { LocalClusterProcess, readCredentials, type ApiCredentials } from './support/local-cluster/cli-process.js';
import { repositoryRoot } from './support/repository-root.js';
import { renderTryIt, tryItCommand } from './support/local-cluster/try-it.js';
import { describeResult, kubectlMissing, shellPath, runShell, startShell, type CommandResult } from './support/kubectl.js';

export interface ScenarioOptions {
  /** The kustomization applied: manifests/base or an overlay. */
  kustomization: string;
  /** Where the registered caBundle must come from: a Secret's ca.crt. */
  caSecret: string;
  /** Objects `kubectl apply -k` reports as created. */
  createdObjects: number;
}

type Json = Record<string, unknown>;
interface Pod {
  metadata: { name: string; uid: string; labels: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  status: { podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { restartCount: number }[] };
}
interface Owned {
  metadata: { name: string; uid: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  spec: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: Json;
}

const NS = 'kube-admission-server';
const COMMAND_TIMEOUT_MS = 200_000;
const READY_PODS = `kubectl -n ${NS} wait pod -l app.kubernetes.io/name=kube-admission-server --for=condition=Ready --timeout=180s`;

/** One local cluster (the CLI as a child process) and what the scenarios need to talk to it. */
export interface ScenarioCluster {
  cluster: LocalClusterProcess;
  api: ApiCredentials;
  env: Record<string, string | undefined>;
  sh(command: string, timeoutMs?: number): Promise<CommandResult>;
  json<T>(command: string): Promise<T>;
  startedAt: number;
}

/** Starts `npm run local-cluster` (stopped in t's teardown); undefined, after a failure, without kubectl. */
export async function startScenarioCluster(t: Test): Promise<ScenarioCluster | undefined> {
  const missing = kubectlMissing();
  if (missing) {
    t.fail(missing);
    return undefined;
  }
  const startedAt = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'local-cluster-test-'));
  const cluster = new LocalClusterProcess(dir);
  t.teardown(async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kubeconfig = (await cluster.waitFor(/^kubeconfig: (.+)$/m, 90_000, 'kubeconfig line'))[1] ?? '';
  await cluster.waitFor(/Ctrl-C stops the cluster/, 10_000, 'end of the Try-it block');
  t.ok(cluster.output.includes(renderTryIt()), 'the CLI prints the Try-it commands');
  const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'kube-cache') };
  const sh = (command: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<CommandResult> => runShell(command, { cwd: repositoryRoot(), env, timeoutMs });
  const json = async <T>(command: string): Promise<T> => {
    const result = await sh(command);
    if (result.code !== 0) throw new Error(describeResult(result));
    return JSON.parse(result.stdout) as T;
  };
  return { cluster, api: await readCredentials(kubeconfig), env, sh, json, startedAt };
}

/**
 * The Try-it commands for one kustomization, then its uninstall, with checks after each. Leaves
 * the cluster as it found it (the examples' namespace deleted too), so another can follow.
 */
export async function runInstallScenario(t: Test, context: ScenarioCluster, options: ScenarioOptions): Promise<void> {
  const { cluster, api, sh, json } = context;
  const elapsed = (): string => `${((performance.now() - context.startedAt) / 1000).toFixed(1)} s`;
  const step = (id: string): string => tryItCommand(id).replaceAll('manifests/base', options.kustomization);
  t.teardown(async () => {
    if (t.passing()) return;
    for (const command of [`kubectl -n ${NS} get deployments,replicasets,pods,endpoints -o wide`, `kubectl -n ${NS} get events --sort-by=.lastTimestamp`]) {
      t.comment(`diagnostics:\n${describeResult(await sh(command, 30_000))}`);
    }
    t.comment(`local cluster output (last 6000 characters):\n${cluster.output.slice(-6000)}`);
  });
  const succeeded = (result: CommandResult): boolean => t.equal(result.code, 0, `${result.command}\n${result.code === 0 ? '' : describeResult(result)}`);

  let podsBefore: Pod[] = [];
  await t.test('install: kubectl apply -k, two Pods of one ReplicaSet, both configurations registered', async (t) => {
    const install = await sh(step('install'));
    succeeded(install);
    t.equal(install.stdout.split('\n').filter((line) => line.endsWith(' created')).length, options.createdObjects, 'every object created');
    succeeded(await sh(step('rollout')));
    t.comment(`installed and rolled out at ${elapsed()}`);
    // A readiness probe can fail after the rollout on a busy machine; the checks below want both Pods serving.
    succeeded(await sh(READY_PODS));
    const deployment = await json<Owned>(`kubectl -n ${NS} get deployment kube-admission-server -o json`);
    const replicaSets = (await json<{ items: Owned[] }>(`kubectl -n ${NS} get replicasets -o json`)).items;
    podsBefore = (await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items;
    t.equal(replicaSets.length, 1);
    const rs = replicaSets[0]!;
    const hash = rs.metadata.labels?.['pod-template-hash'] ?? '';
    t.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{6,10}$/, 'pod-template-hash in its alphabet');
    t.equal(rs.metadata.name, `kube-admission-server-${hash}`);
    t.equal(rs.spec.selector?.matchLabels?.['pod-template-hash'], hash);
    t.has(rs.metadata.ownerReferences?.[0], { kind: 'Deployment', name: 'kube-admission-server', uid: deployment.metadata.uid, controller: true });
    t.equal(podsBefore.length, 2);
    for (const pod of podsBefore) {
      t.has(pod.metadata.ownerReferences?.[0], { kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true });
      t.equal(pod.metadata.labels['pod-template-hash'], hash);
      t.ok(pod.metadata.name.startsWith(`${rs.metadata.name}-`));
      t.equal(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True', `${pod.metadata.name} is ready`);
    }
    const endpoints = await json<{ subsets?: { addresses?: { ip: string }[]; ports?: { port: number }[] }[] }>(`kubectl -n ${NS} get endpoints kube-admission-server -o json`);
    t.same(endpoints.subsets?.[0]?.addresses?.map((a) => a.ip).sort(), podsBefore.map((p) => p.status.podIP).sort(), 'the Service reaches both Pods');
    t.same(endpoints.subsets?.[0]?.ports?.map((p) => p.port), [8443], 'targetPort 8443');

    const clusterRole = await json<Owned>('kubectl get clusterrole kube-admission-server -o json');
    const secret = await json<{ data: Record<string, string> }>(`kubectl -n ${NS} get secret ${options.caSecret} -o json`);
    const ca = new X509Certificate(Buffer.from(secret.data['ca.crt'] ?? '', 'base64'));
    for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration']) {
      const configuration = await json<{ metadata: Owned['metadata']; webhooks: { clientConfig: { caBundle: string; service: Json } }[] }>(`kubectl get ${kind} kube-admission-server -o json`);
      t.has(configuration.metadata.ownerReferences?.[0], { kind: 'ClusterRole', name: 'kube-admission-server', uid: clusterRole.metadata.uid }, `${kind} is owned by the ClusterRole`);
      for (const hook of configuration.webhooks) {
        t.same(hook.clientConfig.service, { name: 'kube-admission-server', namespace: NS, path: hook.clientConfig.service['path'], port: 443 });
        const bundle = new X509Certificate(Buffer.from(hook.clientConfig.caBundle, 'base64'));
        t.equal(bundle.fingerprint256, ca.fingerprint256, `caBundle is ca.crt of Secret ${options.caSecret}`);
      }
    }
  });

  await t.test('admission through kubectl: warnings as shipped, then a denial and a mutation after a policy ConfigMap change', async (t) => {
    succeeded(await sh(step('namespace')));
    const allowed = await sh(step('allowed'));
    succeeded(allowed);
    t.match(allowed.stderr, /^Warning: require-app-label: Pod "allowed" is missing label "app"$/m, 'the webhook warning, as a Warning header');
    const warned = await sh(step('warned'));
    succeeded(warned);
    t.match(warned.stderr, /^Warning: deny-privileged: container "shell" sets securityContext\.privileged: true/m, 'the shipped policy warns about a privileged Pod');
    t.match(warned.stdout, /^pod\/privileged created \(server dry run\)$/m);

    succeeded(await sh(step('policy')));
    succeeded(await sh(step('policy-applied')));
    t.comment(`policy reloaded at ${elapsed()}`);
    const denied = await sh(step('denied'));
    t.equal(denied.code, 1, 'kubectl fails');
    t.match(denied.stderr.trim(), new RegExp(`^Error from server \\(Forbidden\\): error when creating "examples/local-cluster/privileged-pod.yaml": ${DENIED_BY.replace(/[.()]/g, '\\$&')}: container "shell" sets securityContext\\.privileged: true`));
    t.equal((await sh('kubectl -n demo get pod privileged')).code, 1, 'nothing stored, by the dry run or the denied apply');
    succeeded(await sh(step('mutated')));
    const labels = await sh(step('labels'));
    succeeded(labels);
    t.match(labels.stdout, new RegExp(`app=web,${DEFAULTED_LABEL}=true`), 'the default-labels rule added its label');
    const pods = (await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items;
    t.same(pods.map((p) => p.metadata.uid).sort(), podsBefore.map((p) => p.metadata.uid).sort(), 'the same Pods: reloaded, not restarted');
    t.same(pods.map((p) => p.status.containerStatuses?.[0]?.restartCount), [0, 0]);
  });

  await t.test('rolling update under admission load: every answer as the policy says, old Pods stop cleanly', async (t) => {
    const watch = startShell(step('watch'), { cwd: repositoryRoot(), env: context.env, timeoutMs: COMMAND_TIMEOUT_MS });
    const stopLoad = new AbortController();
    const load = admissionLoad(api, 'demo', 6, stopLoad.signal);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    succeeded(await sh(step('restart')));
    succeeded(await sh(step('rolled')));
    t.comment(`rolled out at ${elapsed()}`);
    // The old Pods' shutdown delay (3 s) and drain overlap the rollout's end: keep the load on through it.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    stopLoad.abort();
    const report: LoadReport = await load;
    const watched = await watch.stop();
    const sent = report.sent.labelled + report.sent.unlabelled + report.sent.privileged;
    await cluster.waitForExits(podsBefore.map((p) => p.metadata.name), 30_000);
    // A failure is a close race when it is an EOF or reset while an old Pod closed its server:
    // from its SIGTERM plus most of the shutdown delay (3 s) to just after its exit.
    const closing = podsBefore.map((p) => cluster.stops(NS, p.metadata.name));
    const isCloseRace = (failure: LoadFailure): boolean =>
      CLOSE_RACE.test(failure.detail) && closing.some((s) => s.sigterm !== undefined && s.exit !== undefined && failure.at >= s.sigterm + 2000 && failure.at <= s.exit + 1000);
    const races = report.failures.filter(isCloseRace);
    t.comment(`admission load: ${sent} creates in ${((report.endedAt - report.startedAt) / 1000).toFixed(1)} s; ${races.length} lost to the keep-alive close race, ${report.failures.length - races.length} other failures`);
    const failedCalls = cluster.output.split('\n').filter((line) => line.includes('admission: failed calling webhook'));
    if (report.failures.length > 0) t.comment(`the local cluster's failed webhook calls:\n${failedCalls.join('\n')}`);
    t.same(report.failures.filter((f) => !isCloseRace(f)), [], 'every admission answered as the policy says, but for close races');
    // Each old Pod can lose only the calls on its kept-alive connections at the moment it closes them.
    t.ok(races.length <= 3 * podsBefore.length, `close races bounded (${races.length})`);
    t.ok(sent >= 30, `a load through the whole rollout (${sent} creates)`);
    const podsAfter = (await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items.filter((p) => p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    t.equal(podsAfter.length, 2);
    t.notOk(podsAfter.some((p) => podsBefore.some((b) => b.metadata.uid === p.metadata.uid)), 'both Pods replaced');
    const replicaSets = (await json<{ items: Owned[] }>(`kubectl -n ${NS} get replicasets -o json`)).items;
    t.same(replicaSets.map((rs) => rs.spec.replicas).sort(), [0, 2], 'the new ReplicaSet has both replicas, the old one none');
    for (const pod of podsAfter) t.match(watched.stdout, new RegExp(`^${pod.metadata.name}\\s+1/1\\s+Running`, 'm'), `kubectl get --watch showed ${pod.metadata.name} ready`);
    for (const exit of cluster.exits().filter((e) => podsBefore.some((p) => p.metadata.name === e.pod))) {
      t.same(exit, { namespace: NS, pod: exit.pod, code: 0, signal: null }, `${exit.pod} exited 0 on SIGTERM during the rollout`);
    }
    succeeded(await sh(step('logs')));
  });

  await t.test('uninstall: kubectl delete -k leaves no configuration, no Pod, no namespace', async (t) => {
    const ranPods = new Set([...cluster.exits().map((e) => e.pod), ...(await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items.map((p) => p.metadata.name)]);
    const uninstall = await sh(step('uninstall'));
    succeeded(uninstall);
    t.notMatch(uninstall.stderr, /NotFound|Error/, 'no object was gone before kubectl deleted it');
    const gone = await sh(step('gone'));
    succeeded(gone);
    t.match(gone.stderr, /^No resources found$/m, 'no webhook configuration left');
    t.match((await sh(`kubectl get namespace ${NS}`)).stderr, /NotFound/, 'the namespace is gone');
    t.comment(`uninstalled at ${elapsed()}`);
    succeeded(await sh(step('cleanup')));
    const exits = cluster.exits().filter((e) => e.namespace === NS);
    t.same(new Set(exits.map((e) => e.pod)), ranPods, 'every server process ended');
    t.same(exits.filter((e) => e.signal !== null), [], 'none needed SIGKILL');
  });
}
