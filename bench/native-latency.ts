/**
 * A write denied by a native policy against the same rule as a webhook (what running a rule
 * inside kube-apiserver saves), in the local cluster: the API double with three kube-apiservers, kubelet and
 * kube-proxy, the server installed from manifests/base (two replicas) with the RBAC
 * docs/native-policies.md gives kustomize installs. One policy holds the same cel rule twice,
 * `engine: webhook` and `engine: native`, each picking its ConfigMaps by an objectSelector
 * (`bench-engine`), so both run side by side in one install; ConfigMaps labelled `none` match
 * neither (the baseline: no policy at all). The client is a direct HTTPS client with one
 * kept-alive connection (as kubectl keeps one), creating ConfigMaps one after another, the five
 * kinds of write interleaved so the machine's load falls on all alike; each write's latency is
 * from the request's first byte to the reply's last, as the client sees it.
 */
import { Agent, request } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { startLocalCluster, type LocalCluster } from '../local-cluster/cluster/index.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { runShell, shellPath } from '../test/support/tools/kubectl.js';
import { median, percentile } from './stats.js';

const NS = 'kube-admission-server';
const CONFIG = 'kube-admission-server';
const BENCH_NS = 'bench';
const WRITES = Number(process.env.NATIVE_LATENCY_WRITES ?? 300);
const WARM_UP = 20;

export type NativeVariant = 'none allowed' | 'webhook allowed' | 'webhook denied' | 'native allowed' | 'native denied';
const VARIANTS: readonly NativeVariant[] = ['none allowed', 'webhook allowed', 'webhook denied', 'native allowed', 'native denied'];

const rule = (engine: 'webhook' | 'native'): string => `  - name: deny-${engine}
    kind: cel
    engine: ${engine}
    mode: enforce
    failurePolicy: Fail
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    objectSelector: { matchLabels: { bench-engine: ${engine} } }
    validations:
      - expression: "!has(object.data) || !('forbidden' in object.data)"
        message: the key forbidden is not allowed
`;

const POLICY = `apiVersion: kube-admission-server/v1\nkind: Policy\nexcludedNamespaces: [kube-system]\nwebhooks:\n${rule('webhook')}${rule('native')}`;

/** docs/native-policies.md's rules for a kustomize install, for the one native entry (it has no params). */
const NATIVE_RBAC = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'kas-bench-native' },
    rules: [
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], verbs: ['create', 'list', 'watch'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingadmissionpolicies', 'validatingadmissionpolicybindings'], resourceNames: [`${CONFIG}-deny-native`], verbs: ['get', 'update', 'delete'] },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kas-bench-native' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kas-bench-native' },
    subjects: [{ kind: 'ServiceAccount', name: 'kube-admission-server', namespace: NS }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'kas-bench-native', namespace: NS },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'list', 'watch'] }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'kas-bench-native', namespace: NS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kas-bench-native' },
    subjects: [{ kind: 'ServiceAccount', name: 'kube-admission-server', namespace: NS }],
  },
];

export interface NativeLatencyResult {
  writes: number;
  /** Client-visible latency per write, ms, per variant. */
  ms: Record<NativeVariant, number[]>;
  /** Webhook calls the double's caller made during the measured writes, per variant (expected: 1 per webhook write, 0 otherwise). */
  callsPerWrite: Record<NativeVariant, number>;
  load: number[];
}

type Log = (line: string) => void;

interface Reply {
  status: number;
  message: string;
  ms: number;
}

/** One kept-alive HTTPS connection to the double, as the administrator. */
class Client {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #cluster: LocalCluster;

  constructor(cluster: LocalCluster) {
    this.#cluster = cluster;
  }

  create(name: string, engine: string, denied: boolean): Promise<Reply> {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { 'bench-engine': engine } }, data: denied ? { forbidden: 'yes' } : { fine: 'yes' } });
    const { url, caPem, token } = this.#cluster.api;
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const req = request(new URL(`/api/v1/namespaces/${BENCH_NS}/configmaps`, url), {
        method: 'POST',
        agent: this.#agent,
        ca: caPem,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(30_000),
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString();
          let message = '';
          try {
            message = String((JSON.parse(text) as { message?: string }).message ?? '');
          } catch {
            message = text;
          }
          resolve({ status: res.statusCode ?? 0, message, ms });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

async function sh(cluster: LocalCluster, dir: string, command: string): Promise<string> {
  const env = { PATH: shellPath(), HOME: dir, KUBECONFIG: cluster.kubeconfig, KUBECACHEDIR: join(dir, 'kube-cache') };
  const result = await runShell(command, { cwd: repositoryRoot(), env, timeoutMs: 600_000 });
  if (result.code !== 0) throw new Error(`${command}: exit ${result.code}: ${result.stderr.trim()}`);
  return result.stdout;
}

async function apply(cluster: LocalCluster, dir: string, name: string, objects: unknown[]): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
  await sh(cluster, dir, `kubectl apply -f ${file}`);
}

/** Until the leader registered both: the webhook entry in the configuration, the policy and its binding. */
async function waitForBothEngines(cluster: LocalCluster): Promise<void> {
  const store = cluster.api.store;
  const deadline = performance.now() + 180_000;
  for (;;) {
    const webhooks = (store.get('validatingwebhookconfigurations', undefined, CONFIG)?.['webhooks'] as Array<{ clientConfig: { service?: { path?: string } } }> | undefined) ?? [];
    const webhook = webhooks.some((w) => w.clientConfig.service?.path?.includes('deny-webhook'));
    const native = store.get('validatingadmissionpolicybindings', undefined, `${CONFIG}-deny-native`) !== undefined;
    if (webhook && native) return;
    if (performance.now() > deadline) throw new Error(`not registered in 180 s (webhook entry ${webhook}, native binding ${native})`);
    await sleep(500);
  }
}

/** Each variant answers as expected once (so a figure is never of the wrong path). */
function expectAnswer(variant: NativeVariant, reply: Reply): void {
  const denied = variant.endsWith('denied');
  const ok = denied
    ? reply.status >= 400 && (variant.startsWith('native') ? /ValidatingAdmissionPolicy 'kube-admission-server-deny-native'/ : /admission webhook "[^"]*" denied the request/).test(reply.message)
    : reply.status === 201;
  if (!ok) throw new Error(`${variant}: answered ${reply.status} ${reply.message}`);
}

export async function runNativeLatencyBench(log: Log): Promise<NativeLatencyResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-native-latency-'));
  const cluster = await startLocalCluster({ dir, certManager: false, slowStart: 4 });
  const client = new Client(cluster);
  const load: number[] = [];
  try {
    log('native latency: installing manifests/base and the native RBAC into the local cluster');
    await sh(cluster, dir, 'kubectl apply -k manifests/base');
    await apply(cluster, dir, 'rbac', NATIVE_RBAC);
    await apply(cluster, dir, 'namespace', [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: BENCH_NS } }]);
    await apply(cluster, dir, 'policy', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-admission-server-policy', namespace: NS }, data: { 'policy.yaml': POLICY } }]);
    await sh(cluster, dir, `kubectl -n ${NS} rollout status deployment/kube-admission-server --timeout=600s`);
    await waitForBothEngines(cluster);
    // kube-apiservers' caches lag a little; let them catch up before measuring.
    await sleep(2000);
    let serial = 0;
    const write = async (variant: NativeVariant): Promise<Reply> => {
      const [engine, outcome] = variant.split(' ') as [string, string];
      return client.create(`w-${++serial}`, engine, outcome === 'denied');
    };
    for (let i = 0; i < WARM_UP; i++) for (const variant of VARIANTS) expectAnswer(variant, await write(variant));
    log(`native latency: ${WRITES} writes of each kind, interleaved`);
    const ms = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<NativeVariant, number[]>;
    const calls = Object.fromEntries(VARIANTS.map((v) => [v, 0])) as Record<NativeVariant, number>;
    load.push(loadavg()[0] ?? 0);
    for (let i = 0; i < WRITES; i++) {
      for (const variant of VARIANTS) {
        const before = cluster.admission.calls.length;
        const reply = await write(variant);
        expectAnswer(variant, reply);
        // The caller keeps its last 1000 calls: a count taken around one write is exact.
        calls[variant] += cluster.admission.calls.length - before;
        ms[variant].push(reply.ms);
      }
      if (i === Math.floor(WRITES / 2)) load.push(loadavg()[0] ?? 0);
    }
    load.push(loadavg()[0] ?? 0);
    const callsPerWrite = Object.fromEntries(VARIANTS.map((v) => [v, calls[v] / WRITES])) as Record<NativeVariant, number>;
    for (const variant of VARIANTS) log(`native latency: ${variant}: median ${median(ms[variant]).toFixed(2)} ms, ${callsPerWrite[variant]} webhook calls per write`);
    return { writes: WRITES, ms, callsPerWrite, load };
  } finally {
    client.close();
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const f = (value: number): string => value.toFixed(2);

export function nativeLatencyReport(result: NativeLatencyResult): string {
  const base = median(result.ms['none allowed']);
  const rows = VARIANTS.map((variant) => {
    const values = result.ms[variant];
    return `| ${variant} | ${f(median(values))} | ${f(percentile(values, 90))} | ${f(percentile(values, 99))} | ${(median(values) / base).toFixed(2)} | ${result.callsPerWrite[variant]} |`;
  });
  return [
    `${result.writes} ConfigMap creates of each kind, interleaved, one kept-alive HTTPS connection; load average ${result.load.map((l) => l.toFixed(1)).join(', ')} (start, middle, end).`,
    '',
    '| write | median ms | p90 ms | p99 ms | median / no policy | webhook calls per write |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}
