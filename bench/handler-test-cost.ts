/**
 * What the handler test helpers cost per case: `node dist/bench/handler-test-cost.js [CASES]`
 * runs CASES (default 2000) cases of each kind after a warm-up and prints the CPU time per case
 * (process.cpuUsage, so other load on the machine moves it less than wall time), next to calling
 * the handler function directly in the same run (the baseline).
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { handlerMetrics } from '../src/server/handler-metrics.js';
import { admissionRequest, defineMutatingWebhook, defineValidatingWebhook, reviewPolicy, reviewWebhook, setLabel, type k8s } from '../src/index.js';

const pod: k8s.V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:latest', resources: { limits: { memory: '128Mi' } } }] },
};
const validating = defineValidatingWebhook({
  name: 'no-latest',
  kind: 'Pod',
  handler: (request) => (request.object?.spec?.containers.some((c) => c.image?.endsWith(':latest')) ? { allowed: false, message: 'pin your images' } : { allowed: true }),
});
const mutating = defineMutatingWebhook({
  name: 'stamp',
  kind: 'Pod',
  handler: (request) => (request.object ? { allowed: true, object: setLabel(request.object, 'example.com/stamped', 'yes') } : { allowed: true }),
});

async function cpuMicrosPerCase(cases: number, run: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, cases); i++) await run();
  const start = process.cpuUsage();
  for (let i = 0; i < cases; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / cases;
}

const cases = Number(process.argv[2] ?? '2000');
const context = { signal: new AbortController().signal, dryRun: false, webhook: validating, log: pino({ level: 'silent' }), metrics: handlerMetrics(new Registry()) };
const kinds: [string, () => unknown][] = [
  ['baseline: admissionRequest + the handler function called directly', () => validating.handler(admissionRequest(pod) as never, context)],
  ['admissionRequest alone', () => admissionRequest(pod)],
  ['reviewWebhook, validating (denies)', () => reviewWebhook(validating, admissionRequest(pod))],
  ['reviewWebhook, mutating (patch + patched object)', () => reviewWebhook(mutating, admissionRequest(pod))],
  ['reviewPolicy, both webhooks', () => reviewPolicy([validating, mutating], admissionRequest(pod))],
];
// Three rounds, interleaved; the first warms the JIT for all of them and is not reported.
const rounds: number[][] = [];
for (let round = 0; round < 3; round++) {
  const figures: number[] = [];
  for (const [, run] of kinds) figures.push(await cpuMicrosPerCase(cases, run));
  rounds.push(figures);
}
console.log(`${cases} cases each, Node ${process.version}\n| case | CPU µs per case, round 2 | round 3 |\n|---|---:|---:|`);
kinds.forEach(([name], i) => console.log(`| ${name} | ${rounds[1]![i]!.toFixed(1)} | ${rounds[2]![i]!.toFixed(1)} |`));
