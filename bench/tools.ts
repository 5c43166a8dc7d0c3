/**
 * The tools at cluster scale: rule evaluations per CPU second of `evaluate`
 * (in process, warm: a 25-rule policy on 5,000 Pods) against the floor of calling the same
 * handlers directly on a prepared request, and `audit` (the compiled binary against the API
 * double, paged 500 at a time) on 1,000 and 10,000 Pods: CPU per evaluation and peak RSS, which
 * must not grow with the number of objects. CPU time, not the wall clock: these machines are
 * shared, and waiting for a core is not the tool's cost.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { AdmissionContext, AdmissionRequest, Webhook } from '../src/admission/types.js';
import { admissionRequestFor } from '../src/kube/evaluation/admission-request.js';
import { evaluateEach } from '../src/tools/evaluation.js';
import { toolsPods, toolsPolicy } from './tools-workload.js';

const OBJECTS = Number(process.env.BENCH_TOOLS_OBJECTS ?? 5000);
const ROUNDS = Number(process.env.BENCH_TOOLS_ROUNDS ?? 5);
const AUDIT_SIZES = (process.env.BENCH_TOOLS_AUDIT ?? '1000,10000').split(',').map(Number);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const cpuUs = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

export interface ToolsResult {
  rules: number;
  objects: number;
  evaluatePerCpuSecond: number;
  floorPerCpuSecond: number;
  evaluateWallPerSecond: number;
  audit: { objects: number; evaluations: number; perCpuSecond: number; maxRssMb: number; wallSeconds: number }[];
}

function webhooksOf(): Webhook[] {
  const parsed = parsePolicy(toolsPolicy(), 'bench/tools-workload.ts');
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  return parsed.webhooks;
}

/** The floor: each handler called directly on a prepared request, no matching, no report. */
function floorRound(webhooks: readonly Webhook[], requests: readonly AdmissionRequest[]): { evaluations: number; cpu: number } {
  const context = { signal: new AbortController().signal, dryRun: false, namespaceObject: null } as unknown as AdmissionContext;
  const start = cpuUs();
  let evaluations = 0;
  for (const request of requests) {
    for (const webhook of webhooks) {
      const input = webhook.type === 'mutating' ? { ...request, object: structuredClone(request.object) } : request;
      (webhook.handler as (r: AdmissionRequest, c: AdmissionContext) => unknown)(input, { ...context, webhook });
      evaluations++;
    }
  }
  return { evaluations, cpu: cpuUs() - start };
}

async function evaluateRound(webhooks: readonly Webhook[], manifests: { object: ReturnType<typeof toolsPods>[number]; source: string }[]) {
  const startCpu = cpuUs();
  const startWall = performance.now();
  // Each result counted and dropped as it comes, as audit and evaluate's report take them (evaluateEach).
  let evaluations = 0;
  await evaluateEach(webhooks, manifests, { excludedNamespaces: ['kube-system'], defaultNamespace: 'default' }, (r) => (evaluations += r.outcome.webhooks.filter((w) => w.decision !== 'skipped').length));
  return { evaluations, cpu: cpuUs() - startCpu, wall: performance.now() - startWall };
}

function runAudit(kubeconfig: string, policy: string): Promise<{ stdout: string; usage: { maxRssKb: number; cpuUs: number }; wall: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(ROOT, 'dist', 'bench', 'report-usage.js'), join(ROOT, 'dist', 'src', 'main.js'), 'audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '-o', 'json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
      timeout: 600_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stderr.split('\n').find((l) => l.includes('benchUsage'));
      if ((code !== 0 && code !== 1) || !line) return reject(new Error(`audit exited ${code}: ${stderr.slice(-500)}`));
      resolve({ stdout, usage: (JSON.parse(line) as { benchUsage: { maxRssKb: number; cpuUs: number } }).benchUsage, wall: performance.now() - started });
    });
  });
}

async function auditAt(objects: number, dir: string, policy: string): Promise<ToolsResult['audit'][number]> {
  const api = await startFakeApiServer();
  try {
    for (let i = 0; i < 20; i++) api.store.createNamespace(`ns-${i}`);
    for (const pod of toolsPods(objects)) api.store.put('pods', pod);
    const kubeconfig = join(dir, `kubeconfig-${objects}`);
    await api.writeKubeconfig(kubeconfig);
    const run = await runAudit(kubeconfig, policy);
    const report = JSON.parse(run.stdout) as { namespaces: { objects: number }[] };
    const audited = report.namespaces.reduce((n, ns) => n + ns.objects, 0);
    if (audited !== objects) throw new Error(`audit saw ${audited} of ${objects} Pods`);
    // Every Pod reaches all 25 webhooks (none is excluded, every rule matches Pods).
    const evaluations = objects * 25;
    return { objects, evaluations, perCpuSecond: Math.round(evaluations / (run.usage.cpuUs / 1e6)), maxRssMb: Math.round(run.usage.maxRssKb / 1024), wallSeconds: Math.round(run.wall / 100) / 10 };
  } finally {
    await api.close();
  }
}

export async function runToolsBench(log: (line: string) => void): Promise<ToolsResult> {
  const webhooks = webhooksOf();
  const manifests = toolsPods(OBJECTS).map((object, i) => ({ object, source: `bench document ${i + 1}` }));
  const requests = manifests.map((m) => admissionRequestFor(m.object, { defaultNamespace: 'default' }));
  log(`tools: evaluate, ${webhooks.length} rules on ${OBJECTS} Pods, ${ROUNDS} rounds (first is warm-up)`);
  await evaluateRound(webhooks, manifests.slice(0, 500));
  floorRound(webhooks, requests.slice(0, 500));
  const evaluate: number[] = [];
  const floor: number[] = [];
  const wall: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const e = await evaluateRound(webhooks, manifests);
    const f = floorRound(webhooks, requests);
    if (round === 0) continue;
    evaluate.push(e.evaluations / (e.cpu / 1e6));
    wall.push(e.evaluations / (e.wall / 1000));
    floor.push(f.evaluations / (f.cpu / 1e6));
  }
  const dir = await mkdtemp(join(tmpdir(), 'kas-bench-tools-'));
  try {
    const policy = join(dir, 'policy.yaml');
    await writeFile(policy, toolsPolicy());
    const audit: ToolsResult['audit'] = [];
    for (const size of AUDIT_SIZES) {
      log(`tools: audit of ${size} Pods (compiled binary against the API double)`);
      audit.push(await auditAt(size, dir, policy));
    }
    return {
      rules: webhooks.length,
      objects: OBJECTS,
      evaluatePerCpuSecond: Math.round(median(evaluate)),
      floorPerCpuSecond: Math.round(median(floor)),
      evaluateWallPerSecond: Math.round(median(wall)),
      audit,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function toolsReport(result: ToolsResult): string {
  const rows = [
    '| run | rule evaluations per CPU second | note |',
    '|---|---|---|',
    `| evaluate, ${result.rules} rules on ${result.objects} Pods (warm, median of rounds) | ${result.evaluatePerCpuSecond.toLocaleString('en-US')} | wall clock on this machine: ${result.evaluateWallPerSecond.toLocaleString('en-US')}/s |`,
    `| floor: the same handlers called directly (no matching, no report) | ${result.floorPerCpuSecond.toLocaleString('en-US')} | evaluate is ${(result.evaluatePerCpuSecond / result.floorPerCpuSecond).toFixed(2)}x of it |`,
    ...result.audit.map((a) => `| audit, ${a.objects.toLocaleString('en-US')} Pods (binary, whole run incl. start and listing) | ${a.perCpuSecond.toLocaleString('en-US')} | peak RSS ${a.maxRssMb} MB, ${a.wallSeconds} s |`),
  ];
  return rows.join('\n');
}
