/**
 * `evaluate` of two builds in one run: `node dist/bench/tools-compare.js
 * ROOT_A ROOT_B [ROUNDS]` loads the compiled tools of each checkout (ROOT/dist/src/...) into this
 * process, and alternates rounds of the same workload (bench/tools-workload.ts: a 25-rule policy on
 * 5,000 Pods) through each: the evaluation alone (each result counted and dropped, as audit uses
 * it; a build without evaluateEach keeps them, as it did), then with evaluate's text and JSON
 * reports. Figures are rule evaluations per CPU second of this process, medians of the warm rounds;
 * the evaluation alone also per wall second, and the 1-minute load average at each round, since
 * these machines are shared.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join, resolve } from 'node:path';
import { median } from './stats.js';
import { toolsPods, toolsPolicy } from './tools-workload.js';

type Manifest = { object: ReturnType<typeof toolsPods>[number]; source: string };
type Result = { outcome: { webhooks: { decision: string }[] } };
interface ToolsOfBuild {
  label: string;
  webhooks: unknown[];
  each: (manifests: Manifest[], onResult: (r: Result) => void) => Promise<void>;
  report: (manifests: Manifest[], format: 'text' | 'json') => Promise<string>;
}

const OPTIONS = { excludedNamespaces: ['kube-system'], defaultNamespace: 'default' };
const cpuUs = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/** What this bench uses of another build's modules (an older one may lack the streaming pieces). */
interface PolicyFileModule {
  parsePolicy(text: string, source: string): { ok: true; webhooks: unknown[] } | { ok: false; errors: string[] };
}
interface EvaluateObjectsModule {
  evaluateObjects(webhooks: unknown[], manifests: Manifest[], options: typeof OPTIONS): Promise<Result[]>;
  evaluateEach?(webhooks: unknown[], manifests: Manifest[], options: typeof OPTIONS, onResult: (r: Result) => void): Promise<void>;
}
interface EvaluateReportModule {
  textReport(results: Result[], verbose: boolean): string;
  jsonReport(results: Result[]): string;
  EvaluateReport?: new (format: 'text' | 'json', verbose: boolean) => { add(result: Result): void; toString(): string };
}

async function load(root: string): Promise<ToolsOfBuild> {
  const module = <T>(path: string): Promise<T> => import(pathToFileURL(join(resolve(root), 'dist', 'src', path)).href) as Promise<T>;
  const [policyFile, objects, report] = await Promise.all([
    module<PolicyFileModule>('policy/policy-file.js'),
    // Builds before the evaluation path moved to src/kube/evaluation/ keep it in tools/evaluate-objects.js.
    module<EvaluateObjectsModule>('tools/evaluation.js').catch(() => module<EvaluateObjectsModule>('tools/evaluate-objects.js')),
    module<EvaluateReportModule>('tools/evaluate-report.js'),
  ]);
  const parsed = policyFile.parsePolicy(toolsPolicy(), 'bench/tools-workload.ts');
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const webhooks = parsed.webhooks;
  const { evaluateEach, evaluateObjects } = objects;
  const each = evaluateEach
    ? (manifests: Manifest[], onResult: (r: Result) => void) => evaluateEach(webhooks, manifests, OPTIONS, onResult)
    : async (manifests: Manifest[], onResult: (r: Result) => void) => void (await evaluateObjects(webhooks, manifests, OPTIONS)).forEach(onResult);
  const Report = report.EvaluateReport;
  const reportOf =
    Report && evaluateEach
    ? async (manifests: Manifest[], format: 'text' | 'json') => {
        const built = new Report(format, false);
        await evaluateEach(webhooks, manifests, OPTIONS, (r: Result) => built.add(r));
        return built.toString();
      }
    : async (manifests: Manifest[], format: 'text' | 'json') => {
        const results = await evaluateObjects(webhooks, manifests, OPTIONS);
        return format === 'text' ? report.textReport(results, false) : report.jsonReport(results);
      };
  return { label: root, webhooks, each, report: reportOf };
}

const evaluationsOf = (r: Result): number => r.outcome.webhooks.filter((w) => w.decision !== 'skipped').length;

/** Evaluations per CPU second of this process, and per wall second. */
async function rates(work: () => Promise<number>): Promise<{ cpu: number; wall: number }> {
  const start = cpuUs();
  const wallStart = performance.now();
  const evaluations = await work();
  return { cpu: evaluations / ((cpuUs() - start) / 1e6), wall: evaluations / ((performance.now() - wallStart) / 1e3) };
}

const perCpuSecond = async (work: () => Promise<number>): Promise<number> => (await rates(work)).cpu;

async function main(): Promise<void> {
  const [rootA, rootB, roundsText = '4'] = process.argv.slice(2);
  if (!rootA || !rootB) throw new Error('usage: node dist/bench/tools-compare.js ROOT_A ROOT_B [ROUNDS]');
  const builds = [await load(rootA), await load(rootB)];
  const manifests = toolsPods(5000).map((object, i) => ({ object, source: `bench document ${i + 1}` }));
  const figures = builds.map(() => ({ evaluation: [] as number[], wall: [] as number[], text: [] as number[], json: [] as number[] }));
  const loads: string[] = [];
  const rounds = Number(roundsText);
  for (let round = 0; round <= rounds; round++) {
    loads.push(loadavg()[0]!.toFixed(1));
    for (const [i, build] of builds.entries()) {
      const { cpu: evaluation, wall } = await rates(async () => {
        let n = 0;
        await build.each(manifests, (r) => (n += evaluationsOf(r)));
        return n;
      });
      const count = evaluation > 0 ? manifests.length * build.webhooks.length : 0;
      const text = await perCpuSecond(async () => (await build.report(manifests, 'text'), count));
      const json = await perCpuSecond(async () => (await build.report(manifests, 'json'), count));
      // The first round of each warms it up.
      if (round === 0) continue;
      figures[i]!.evaluation.push(evaluation);
      figures[i]!.wall.push(wall);
      figures[i]!.text.push(text);
      figures[i]!.json.push(json);
    }
  }
  const fmt = (values: number[]): string => `${Math.round(median(values)).toLocaleString('en-US')} (${values.map((v) => Math.round(v / 1000)).join(', ')}k)`;
  process.stdout.write(`Node ${process.version}, ${manifests.length} Pods x ${builds[0]!.webhooks.length} rules, ${rounds} warm rounds each, alternating; rule evaluations per CPU second, median (each round)\n\n`);
  process.stdout.write(`1-minute load average at each round (the first a warm-up): ${loads.join(', ')}\n\n`);
  process.stdout.write('| build | evaluation alone | evaluation alone, per wall second | with the text report | with the JSON report |\n|---|---:|---:|---:|---:|\n');
  builds.forEach((build, i) => {
    const f = figures[i]!;
    process.stdout.write(`| ${build.label} | ${fmt(f.evaluation)} | ${fmt(f.wall)} | ${fmt(f.text)} | ${fmt(f.json)} |\n`);
  });
  const ratio = median(figures[1]!.evaluation) / median(figures[0]!.evaluation);
  const roundRatios = figures[1]!.evaluation.map((v, r) => (v / figures[0]!.evaluation[r]!).toFixed(2));
  process.stdout.write(`\nevaluation alone, B / A: ${ratio.toFixed(2)}x of the medians; each round ${roundRatios.join(', ')}\n`);
}

await main();
