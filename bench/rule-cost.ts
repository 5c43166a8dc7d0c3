/**
 * CPU time per review of each kind of validating rule on the same Pod, in process (the whole
 * review path: decode, handler, encode, metrics; logging off), measured with process.cpuUsage
 * over interleaved rounds. CPU time does not count the moments the thread waits for a core, so
 * the ratios hold on a loaded machine where wall-clock figures swing severalfold.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import { admissionMetrics } from '../src/server/review/metrics.js';
import { answerReview } from '../src/server/review/review.js';
import { podCreateReview } from './pod-review.js';
import { benchWebhooks } from './webhooks.js';

const ROUTES = [
  { label: 'hand-written handler (label check)', name: 'require-labels' },
  { label: 'built-in rule denyPrivileged', name: 'builtin-deny-privileged' },
  { label: 'cel rule, two validations (memory-limits)', name: 'cel-memory-limits' },
  { label: 'cel rule asking the authorizer (one check, answer cached)', name: 'cel-authorizer' },
] as const;
const PER_ROUND = Number(process.env.BENCH_RULES_REVIEWS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_RULES_ROUNDS ?? 9);

export interface RuleCostResult {
  label: string;
  cpuUsPerReview: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export async function runRuleCostBench(): Promise<{ parseUs: number; routes: RuleCostResult[] }> {
  const body = JSON.stringify(podCreateReview());
  const deps = { registry: new WebhookRegistry(benchWebhooks()), logger: pino({ level: 'silent' }), metrics: admissionMetrics(new Registry()) };
  const call = (name: string) => answerReview(deps, { type: 'validating', name, timeout: '10s', body: JSON.parse(body) });
  for (const route of ROUTES) {
    const answer = await call(route.name);
    if (!JSON.stringify(answer).includes('\\"allowed\\":true')) throw new Error(`${route.name} did not allow the bench Pod: ${JSON.stringify(answer)}`);
    for (let i = 0; i < 5000; i++) await call(route.name);
  }
  const parse: number[] = [];
  const samples = new Map<string, number[]>(ROUTES.map((r) => [r.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    let started = cpuUs();
    for (let i = 0; i < PER_ROUND; i++) JSON.parse(body);
    parse.push((cpuUs() - started) / PER_ROUND);
    for (const route of ROUTES) {
      started = cpuUs();
      for (let i = 0; i < PER_ROUND; i++) await call(route.name);
      samples.get(route.name)!.push((cpuUs() - started) / PER_ROUND);
    }
  }
  return { parseUs: median(parse), routes: ROUTES.map((r) => ({ label: r.label, cpuUsPerReview: median(samples.get(r.name)!) })) };
}

export function ruleCostReport(result: Awaited<ReturnType<typeof runRuleCostBench>>): string {
  const [handler] = result.routes;
  return [
    `In process, logging off, the ~1.2 KB Pod review (allowed by every rule); CPU µs per review (process.cpuUsage), median of ${ROUNDS} interleaved rounds of ${PER_ROUND} reviews each.`,
    '',
    '| validating route | CPU µs per review | of which the rule (minus JSON.parse) | vs hand-written handler |',
    '|---|---:|---:|---:|',
    ...result.routes.map(
      (r) => `| ${r.label} | ${r.cpuUsPerReview.toFixed(1)} | ${(r.cpuUsPerReview - result.parseUs).toFixed(1)} | ${(r.cpuUsPerReview / handler!.cpuUsPerReview).toFixed(2)}x |`,
    ),
    `| (JSON.parse of the body alone) | ${result.parseUs.toFixed(1)} | | |`,
  ].join('\n');
}
