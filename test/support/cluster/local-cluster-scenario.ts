/**
 * The install, run as a user runs it: `npm run local-cluster` (the compiled CLI), then the
 * walk-through's commands (docs/getting-started.md) with kubectl against it, the manifests as shipped. Run by
 * test/local-cluster-install-base.test.ts (manifests/base) and
 * test/local-cluster-install-cert-manager.test.ts (the cert-manager overlay), each on a cluster
 * of its own so that they can run side by side.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { AdmissionLoad, CLOSE_RACE, DEFAULTED_LABEL, DENIED_BY, type LoadFailure } from '../../../local-cluster/cluster/admission-load.js';
import { EVENT_MS, EXIT_MS } from '../deadline.js';
import { rawRequest } from '../../../local-cluster/fake-apiserver/raw-client.js';
import { LocalClusterProcess, readCredentials, type ApiCredentials } from '../../../local-cluster/cluster/cli-process.js';
import { repositoryRoot } from '../../../local-cluster/util/repository-root.js';
import { renderTryIt, tryItCommand } from '../../../local-cluster/cluster/try-it.js';
import { describeResult, kubectlMissing, shellPath, runShell, startShell, type CommandResult } from '../tools/kubectl.js';

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

/** The items of a `kubectl get KIND,KIND -o json` List, each with its kind. */
type Listed = Json & { kind: string };
const ofKind = <T>(items: readonly Listed[], kind: string): T[] => items.filter((o) => o.kind === kind) as unknown as T[];

const NS = 'kube-admission-server';
const COMMAND_TIMEOUT_MS = 200_000;
/** Creates a second during the rolling update: steady, enough to cross every moment of it. */
const LOAD_PER_SECOND = 2;
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

/** Each Pod's log holds `pattern`, read through the API as `kubectl logs` reads it; rejects at the deadline. */
async function waitForPodLogs(api: ApiCredentials, pods: readonly string[], pattern: RegExp, what: string): Promise<void> {
  const deadline = performance.now() + EVENT_MS;
  for (const pod of pods) {
    for (;;) {
      const log = await rawRequest(api, 'GET', `/api/v1/namespaces/${NS}/pods/${pod}/log`);
      if (log.status === 200 && pattern.test(log.text)) break;
      if (performance.now() > deadline) throw new Error(`no ${what} in the log of ${pod} within ${EVENT_MS} ms (HTTP ${log.status}):\n${log.text.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

const isReady = (pod: Pod): boolean => pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** One install file's test: `npm run local-cluster`, then runInstallScenario for `options`. */
export async function installTest(t: Test, options: ScenarioOptions): Promise<void> {
  await t.test(`npm run local-cluster, then the Try-it commands for ${options.kustomization}`, async (t) => {
    const cluster = await startScenarioCluster(t);
    if (!cluster) return;
    await runInstallScenario(t, cluster, options);
    t.comment(`install to uninstall in ${((performance.now() - cluster.startedAt) / 1000).toFixed(1)} s`);
  });
}

/**
 * The Try-it commands for one kustomization, then its uninstall, with checks after each; the
 * examples' namespace is deleted with the install, side by side (each waits out the namespace
 * controller's 5 s grace period).
 */
async function runInstallScenario(t: Test, context: ScenarioCluster, options: ScenarioOptions): Promise<void> {
  const { cluster, api, sh, json } = context;
  const elapsed = (): string => `${((performance.now() - context.startedAt) / 1000).toFixed(1)} s`;
  const step = (id: string): string => tryItCommand(id).replaceAll('manifests/base', options.kustomization);
  const list = async (command: string): Promise<Listed[]> => (await json<{ items: Listed[] }>(command)).items;
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
    succeeded(await sh(step('registered')));
    // The step waits for the configuration the walk-through uses next; kubectl wait --for=create fails at once given two names (NotFound in an aggregate).
    succeeded(await sh('kubectl wait mutatingwebhookconfiguration/kube-admission-server --for=create --timeout=120s'));
    const workloads = await list(`kubectl -n ${NS} get deployment,replicasets,pods,endpoints -o json`);
    const deployment = ofKind<Owned>(workloads, 'Deployment')[0];
    const replicaSets = ofKind<Owned>(workloads, 'ReplicaSet');
    podsBefore = ofKind<Pod>(workloads, 'Pod');
    t.equal(replicaSets.length, 1);
    const rs = replicaSets[0]!;
    const hash = rs.metadata.labels?.['pod-template-hash'] ?? '';
    t.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{6,10}$/, 'pod-template-hash in its alphabet');
    t.equal(rs.metadata.name, `kube-admission-server-${hash}`);
    t.equal(rs.spec.selector?.matchLabels?.['pod-template-hash'], hash);
    t.has(rs.metadata.ownerReferences?.[0], { kind: 'Deployment', name: 'kube-admission-server', uid: deployment?.metadata.uid, controller: true });
    t.equal(podsBefore.length, 2);
    for (const pod of podsBefore) {
      t.has(pod.metadata.ownerReferences?.[0], { kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true });
      t.equal(pod.metadata.labels['pod-template-hash'], hash);
      t.ok(pod.metadata.name.startsWith(`${rs.metadata.name}-`));
      t.ok(isReady(pod), `${pod.metadata.name} is ready`);
    }
    const endpoints = ofKind<{ subsets?: { addresses?: { ip: string }[]; ports?: { port: number }[] }[] }>(workloads, 'Endpoints')[0];
    t.same(endpoints?.subsets?.[0]?.addresses?.map((a) => a.ip).sort(), podsBefore.map((p) => p.status.podIP).sort(), 'the Service reaches both Pods');
    t.same(endpoints?.subsets?.[0]?.ports?.map((p) => p.port), [8443], 'targetPort 8443');

    const secret = await json<{ data: Record<string, string> }>(`kubectl -n ${NS} get secret ${options.caSecret} -o json`);
    const ca = new X509Certificate(Buffer.from(secret.data['ca.crt'] ?? '', 'base64'));
    const clusterScoped = await list('kubectl get clusterrole/kube-admission-server mutatingwebhookconfiguration/kube-admission-server validatingwebhookconfiguration/kube-admission-server -o json');
    const clusterRole = ofKind<Owned>(clusterScoped, 'ClusterRole')[0];
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const configuration = ofKind<{ metadata: Owned['metadata']; webhooks: { clientConfig: { caBundle: string; service: Json } }[] }>(clusterScoped, kind)[0];
      t.has(configuration?.metadata.ownerReferences?.[0], { kind: 'ClusterRole', name: 'kube-admission-server', uid: clusterRole?.metadata.uid }, `${kind} is owned by the ClusterRole`);
      for (const hook of configuration?.webhooks ?? []) {
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
    // The leader registered the new rule; the other replica reloads the same file on its own.
    await waitForPodLogs(api, podsBefore.map((p) => p.metadata.name), /"msg":"policy reloaded"/, 'policy reload');
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
    const load = new AdmissionLoad(api, 'demo', LOAD_PER_SECOND);
    const oldPods = podsBefore.map((p) => p.metadata.name);
    let restartAt = 0;
    let lastExit = 0;
    try {
      await load.answerAfter(0, EVENT_MS);
      restartAt = Date.now();
      succeeded(await sh(step('restart')));
      succeeded(await sh(step('rolled')));
      t.comment(`rolled out at ${elapsed()}`);
      // The old Pods' shutdown (3 s of serving on, then the drain) outlasts the rollout: the load
      // goes on until both have exited and one more answer came after.
      await cluster.waitForExits(oldPods, EXIT_MS);
      lastExit = Math.max(...oldPods.map((pod) => cluster.stops(NS, pod).exit ?? 0));
      await load.answerAfter(lastExit, EVENT_MS);
    } finally {
      await load.stop();
    }
    const report = load.report;
    const watched = await watch.stop();
    const sent = report.sent.labelled + report.sent.unlabelled + report.sent.privileged;
    t.ok((load.firstAnswerAt ?? Infinity) <= restartAt, 'the load ran before the rollout began');
    t.ok((load.lastAnswerAt ?? 0) > lastExit, 'and until after the last old Pod exited');
    // A failure is a close race when it is an EOF or reset while an old Pod closed its server:
    // from its SIGTERM plus most of the shutdown delay (3 s) to just after its exit.
    const closing = oldPods.map((pod) => cluster.stops(NS, pod));
    const isCloseRace = (failure: LoadFailure): boolean =>
      CLOSE_RACE.test(failure.detail) && closing.some((s) => s.sigterm !== undefined && s.exit !== undefined && failure.at >= s.sigterm + 2000 && failure.at <= s.exit + 1000);
    const races = report.failures.filter(isCloseRace);
    t.comment(`admission load: ${sent} creates in ${((report.endedAt - report.startedAt) / 1000).toFixed(1)} s; ${races.length} lost to the keep-alive close race, ${report.failures.length - races.length} other failures`);
    const failedCalls = cluster.output.split('\n').filter((line) => line.includes('admission: failed calling webhook'));
    if (report.failures.length > 0) t.comment(`the local cluster's failed webhook calls:\n${failedCalls.join('\n')}`);
    t.same(report.failures.filter((f) => !isCloseRace(f)), [], 'every admission answered as the policy says, but for close races');
    // Each old Pod can lose only the calls on its kept-alive connections at the moment it closes them.
    t.ok(races.length <= 3 * podsBefore.length, `close races bounded (${races.length})`);
    const after = await list(`kubectl -n ${NS} get replicasets,pods -o json`);
    const podsAfter = ofKind<Pod>(after, 'Pod').filter(isReady);
    t.equal(podsAfter.length, 2);
    t.notOk(podsAfter.some((p) => podsBefore.some((b) => b.metadata.uid === p.metadata.uid)), 'both Pods replaced');
    t.same(ofKind<Owned>(after, 'ReplicaSet').map((rs) => rs.spec.replicas).sort(), [0, 2], 'the new ReplicaSet has both replicas, the old one none');
    for (const pod of podsAfter) t.match(watched.stdout, new RegExp(`^${pod.metadata.name}\\s+1/1\\s+Running`, 'm'), `kubectl get --watch showed ${pod.metadata.name} ready`);
    for (const exit of cluster.exits().filter((e) => oldPods.includes(e.pod))) {
      t.same(exit, { namespace: NS, pod: exit.pod, code: 0, signal: null }, `${exit.pod} exited 0 on SIGTERM during the rollout`);
    }
    succeeded(await sh(step('logs')));
  });

  await t.test('uninstall: kubectl delete -k leaves no configuration, no Pod, no namespace', async (t) => {
    const ranPods = new Set([...cluster.exits().map((e) => e.pod), ...(await json<{ items: Pod[] }>(`kubectl -n ${NS} get pods -o json`)).items.map((p) => p.metadata.name)]);
    const [uninstall, cleanup] = await Promise.all([sh(step('uninstall')), sh(step('cleanup'))]);
    succeeded(uninstall);
    succeeded(cleanup);
    t.notMatch(uninstall.stderr, /NotFound|Error/, 'no object was gone before kubectl deleted it');
    const gone = await sh(step('gone'));
    succeeded(gone);
    t.match(gone.stderr, /^No resources found$/m, 'no webhook configuration left');
    t.match((await sh(`kubectl get namespace ${NS} demo`)).stderr, new RegExp(`namespaces "${NS}" not found[\\s\\S]*namespaces "demo" not found`), 'both namespaces are gone');
    t.comment(`uninstalled at ${elapsed()}`);
    const exits = cluster.exits().filter((e) => e.namespace === NS);
    t.same(new Set(exits.map((e) => e.pod)), ranPods, 'every server process ended');
    t.same(exits.filter((e) => e.signal !== null), [], 'none needed SIGKILL');
  });
}
