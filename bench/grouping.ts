/**
 * Grouped registration against one webhook per entry, in the local cluster (the
 * API double with three kube-apiservers, kubelet, kube-proxy; the install is manifests/base as
 * shipped, two replicas). The policy is bench/grouping-policy.ts's 30 rules, applied as the
 * ConfigMap a platform team edits. Per variant, alternating so that the machine's load falls on
 * both alike: `kubectl apply -f` of Pods one after another, and
 * - AdmissionReviews per Pod create: the calls kube-apiserver (the double's caller) made;
 * - server CPU per Pod create: user+system CPU of both server processes (their
 *   process_cpu_seconds_total) during the creates, less what they burn idle over as long
 *   (probes, Lease renewals), measured just before;
 * - the client's latency: the wall time of each `kubectl apply` (process start to exit, as a user
 *   waits) and of the create request itself at the API.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { startLocalCluster, type LocalCluster } from '../local-cluster/cluster/index.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { runShell, shellPath } from '../test/support/tools/kubectl.js';
import { benchPod, groupingBenchPolicy, GROUPING_BENCH_RULES, type GroupingVariant } from './grouping-policy.js';
import { median, percentile } from './stats.js';

const NS = 'kube-admission-server';
const BENCH_NS = 'bench';
const CREATES = Number(process.env.GROUPING_CREATES ?? 25);
const ROUNDS: readonly GroupingVariant[] = (process.env.GROUPING_ROUNDS ?? 'none,auto,none,auto,auto-warn-fail').split(',') as GroupingVariant[];
const IDLE_MS = 5000;
const WARM_UP = 10;

export interface GroupingRound {
  variant: GroupingVariant;
  webhooks: { mutating: number; validating: number };
  /** The calls kube-apiserver (the double's caller) made. */
  reviewsPerCreate: number;
  /** The reviews the servers answered (their duration histograms' counts): the same, seen from the other side. */
  answeredPerCreate: number;
  /** Net of the idle burn over the creates' wall time (noisy on a loaded machine: the idle window is short). */
  cpuMsPerCreate: number;
  /** Everything both servers burned during the creates, per create (idle burn included: a slower round carries more of it). */
  grossCpuMsPerCreate: number;
  idleCpuMsPerSecond: number;
  kubectlMs: number[];
  apiCreateMs: number[];
  creates: number;
}

export interface GroupingResult {
  rules: number;
  rounds: GroupingRound[];
  load: number[];
}

interface ServerPod {
  name: string;
  ip: string;
}

type Log = (line: string) => void;

class Bench {
  readonly #cluster: LocalCluster;
  readonly #dir: string;
  readonly #env: Record<string, string>;

  constructor(cluster: LocalCluster, dir: string) {
    this.#cluster = cluster;
    this.#dir = dir;
    this.#env = { PATH: shellPath(), HOME: dir, KUBECONFIG: cluster.kubeconfig, KUBECACHEDIR: join(dir, 'kube-cache') };
  }

  async sh(command: string, timeoutMs = 300_000): Promise<{ ms: number; stdout: string }> {
    const result = await runShell(command, { cwd: repositoryRoot(), env: this.#env, timeoutMs });
    if (result.code !== 0) throw new Error(`${command}: exit ${result.code}: ${result.stderr.trim()}`);
    return { ms: result.ms, stdout: result.stdout };
  }

  async apply(name: string, object: unknown): Promise<number> {
    const file = join(this.#dir, `${name}.yaml`);
    await writeFile(file, stringify(object));
    return (await this.sh(`kubectl apply -f ${file}`)).ms;
  }

  servers(): ServerPod[] {
    return this.#cluster.api.store
      .list('pods', NS)
      .filter((pod) => (pod['status'] as { phase?: string } | undefined)?.phase === 'Running')
      .map((pod) => ({ name: pod.metadata?.name ?? '', ip: String((pod['status'] as { podIP?: string }).podIP ?? '') }));
  }

  async metric(pod: ServerPod, name: string): Promise<number> {
    const text = await (await fetch(`http://${pod.ip}:8080/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
    return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  /** Reviews answered so far by `pods`, all webhooks. */
  async answered(pods: readonly ServerPod[]): Promise<number> {
    return (await Promise.all(pods.map((pod) => this.metric(pod, 'kube_admission_request_duration_seconds_count')))).reduce((a, b) => a + b, 0);
  }

  async cpuSeconds(pods: readonly ServerPod[]): Promise<number> {
    return (await Promise.all(pods.map((pod) => this.metric(pod, 'process_cpu_seconds_total')))).reduce((a, b) => a + b, 0);
  }

  registered(): { mutating: number; validating: number } {
    const count = (resource: string) => ((this.#cluster.api.store.get(resource, undefined, NS)?.['webhooks'] as unknown[] | undefined) ?? []).length;
    return { mutating: count('mutatingwebhookconfigurations'), validating: count('validatingwebhookconfigurations') };
  }

  /** Applies the policy and waits until every server reloaded it and the leader registered it. */
  async usePolicy(variant: GroupingVariant, expected: number, log: Log): Promise<void> {
    const pods = this.servers();
    const before = await Promise.all(pods.map((pod) => this.metric(pod, 'kube_admission_policy_reloads_total')));
    await this.apply(`policy-${variant}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-admission-server-policy', namespace: NS },
      data: { 'policy.yaml': groupingBenchPolicy(variant) },
    });
    const deadline = performance.now() + 180_000;
    for (;;) {
      const reloaded = await Promise.all(pods.map(async (pod, i) => (await this.metric(pod, 'kube_admission_policy_reloads_total')) > before[i]!));
      const { mutating, validating } = this.registered();
      if (reloaded.every(Boolean) && mutating + validating === expected) break;
      if (performance.now() > deadline) throw new Error(`policy ${variant}: not reloaded and registered in 180 s (${mutating + validating} webhooks registered)`);
      await sleep(500);
    }
    log(`grouping: policy ${variant} in force (${JSON.stringify(this.registered())})`);
    // kube-apiservers' caches lag a little; let them catch up before measuring.
    await sleep(2000);
  }

  async round(variant: GroupingVariant, index: number, log: Log): Promise<GroupingRound> {
    const pods = this.servers();
    // Warm up: the connections of this variant's webhook paths, the JIT.
    for (let i = 0; i < WARM_UP; i++) await this.apply(`warm-${index}-${i}`, benchPod(`warm-${index}-${i}`, BENCH_NS));
    const idleFrom = await this.cpuSeconds(pods);
    const idleStart = performance.now();
    await sleep(IDLE_MS);
    const idleCpuMsPerSecond = ((await this.cpuSeconds(pods)) - idleFrom) * 1000 / ((performance.now() - idleStart) / 1000);

    const requestsBefore = this.#cluster.api.requests.length;
    const cpuBefore = await this.cpuSeconds(pods);
    const answeredBefore = await this.answered(pods);
    const started = performance.now();
    const kubectlMs: number[] = [];
    for (let i = 0; i < CREATES; i++) kubectlMs.push(await this.apply(`pod-${index}-${i}`, benchPod(`pod-${index}-${i}`, BENCH_NS)));
    const ended = performance.now();
    const seconds = (ended - started) / 1000;
    const grossCpuMs = ((await this.cpuSeconds(pods)) - cpuBefore) * 1000;
    const cpuMs = grossCpuMs - idleCpuMsPerSecond * seconds;
    const answered = (await this.answered(pods)) - answeredBefore;
    // The caller keeps its last 1000 calls: those of this round are the ones made within it.
    const calls = this.#cluster.admission.calls.filter((call) => call.startedAt >= started && call.startedAt <= ended);
    const creates = this.#cluster.api.requests
      .slice(requestsBefore)
      .filter((r) => r.verb === 'create' && r.resource === 'pods' && r.namespace === BENCH_NS && r.status === 201 && r.endedAt !== undefined);
    if (creates.length !== CREATES) throw new Error(`round ${variant}: ${creates.length} Pods created, ${CREATES} expected`);
    const round: GroupingRound = {
      variant,
      webhooks: this.registered(),
      reviewsPerCreate: calls.length / CREATES,
      answeredPerCreate: answered / CREATES,
      cpuMsPerCreate: cpuMs / CREATES,
      grossCpuMsPerCreate: grossCpuMs / CREATES,
      idleCpuMsPerSecond,
      kubectlMs,
      apiCreateMs: creates.map((r) => r.endedAt! - r.startedAt),
      creates: CREATES,
    };
    log(`grouping: ${variant}: ${round.reviewsPerCreate} reviews, ${round.cpuMsPerCreate.toFixed(1)} CPU ms per create, kubectl median ${Math.round(median(kubectlMs))} ms`);
    return round;
  }
}

const loadAverage = (): number => loadavg()[0] ?? 0;

export async function runGroupingBench(log: Log): Promise<GroupingResult> {
  const dir = await mkdtemp(join(tmpdir(), 'kas-grouping-bench-'));
  const cluster = await startLocalCluster({ dir, certManager: false, slowStart: 4 });
  const load: number[] = [];
  try {
    const bench = new Bench(cluster, dir);
    log('grouping: installing manifests/base into the local cluster');
    await bench.sh('kubectl apply -k manifests/base');
    await bench.sh(`kubectl -n ${NS} rollout status deployment/kube-admission-server --timeout=600s`);
    await bench.apply('namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: BENCH_NS } });
    const rounds: GroupingRound[] = [];
    for (const [index, variant] of ROUNDS.entries()) {
      await bench.usePolicy(variant, variant === 'none' ? GROUPING_BENCH_RULES : variant === 'auto-warn-fail' ? 2 : 3, log);
      load.push(loadAverage());
      rounds.push(await bench.round(variant, index, log));
    }
    return { rules: GROUPING_BENCH_RULES, rounds, load };
  } finally {
    await cluster.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const fmt = (values: readonly number[]): string => `${Math.round(median(values))} / ${Math.round(percentile(values, 90))}`;

export function groupingReport(result: GroupingResult): string {
  const rows = result.rounds.map(
    (r) =>
      `| ${r.variant} | ${r.webhooks.mutating} + ${r.webhooks.validating} | ${r.reviewsPerCreate.toFixed(2)} (${r.answeredPerCreate.toFixed(2)}) | ${r.grossCpuMsPerCreate.toFixed(1)} / ${r.cpuMsPerCreate.toFixed(1)} (idle ${r.idleCpuMsPerSecond.toFixed(0)} ms/s) | ${fmt(r.kubectlMs)} | ${fmt(r.apiCreateMs)} |`,
  );
  return [
    `${result.rules} rules, ${result.rounds[0]?.creates ?? 0} Pod creates per round, load average ${result.load.map((l) => l.toFixed(1)).join(', ')} at the rounds' starts.`,
    '',
    '| grouping | webhooks registered (mutating + validating) | AdmissionReviews per Pod create (answered by the servers) | server CPU ms per Pod create, gross / net of idle | `kubectl apply` ms, median / p90 | create request at the API ms, median / p90 |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}
