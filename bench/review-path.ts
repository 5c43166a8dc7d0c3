/**
 * In-process cost of the server's own review path (decode, handler, patch, encode, metrics, log
 * line), without HTTP or TLS: CPU-bound in one thread, so far steadier on a shared machine than
 * req/s, and it shows what this project adds on top of fastify and node:https.
 */
import { pino, type Logger } from 'pino';
import { createLogger, fixedFieldsLogger } from '../src/lifecycle/logger.js';
import { Registry } from 'prom-client';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import type { WebhookType } from '../src/admission/types.js';
import { admissionMetrics } from '../src/server/review/metrics.js';
import { answerReview, type ReviewDeps } from '../src/server/review/review.js';
import { benchWebhooks } from './webhooks.js';
import { podCreateReview } from './pod-review.js';

export interface ReviewPathResult {
  label: string;
  /** JSON.parse of the body, which any server must do. */
  parseUs: number;
  /** parse + the whole review path. */
  totalUs: number;
}

const ITERATIONS = 50_000;

async function timeReviews(deps: ReviewDeps, type: WebhookType, name: string, body: string): Promise<number> {
  const call = () => answerReview(deps, { type, name, timeout: '10s', body: JSON.parse(body) });
  for (let i = 0; i < 5000; i++) await call();
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await call();
  return Number(process.hrtime.bigint() - started) / ITERATIONS / 1000;
}

function timeParse(body: string): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) JSON.parse(body);
  return Number(process.hrtime.bigint() - started) / ITERATIONS / 1000;
}

export async function runReviewPathBench(): Promise<ReviewPathResult[]> {
  const body = JSON.stringify(podCreateReview());
  const registry = new WebhookRegistry(benchWebhooks());
  const loggers: [string, Logger][] = [
    ['log level info, the default: a line only for denied, warned, audited', fixedFieldsLogger(createLogger('info', '/dev/null'), { component: 'admission' })],
    ['logging off', pino({ level: 'silent' })],
  ];
  const results: ReviewPathResult[] = [];
  const routes = [
    ['validating', 'require-labels'],
    ['mutating', 'add-label'],
    ['validating', 'builtin-deny-privileged'],
    ['validating', 'cel-memory-limits'],
  ] as const;
  for (const [type, name] of routes) {
    for (const [logLabel, logger] of loggers) {
      const deps = { registry, logger, metrics: admissionMetrics(new Registry()) };
      const totalUs = await timeReviews(deps, type, name, body);
      results.push({ label: `${type} ${name} (${logLabel})`, parseUs: timeParse(body), totalUs });
    }
  }
  return results;
}

export function reviewPathReport(results: ReviewPathResult[]): string {
  return [
    `In-process, ${ITERATIONS} reviews each, same body; no HTTP, no TLS.`,
    '',
    '| review path | µs per review (incl. JSON.parse) | of which JSON.parse | added by the review path |',
    '|---|---:|---:|---:|',
    ...results.map((r) => `| ${r.label} | ${r.totalUs.toFixed(1)} | ${r.parseUs.toFixed(1)} | ${(r.totalUs - r.parseUs).toFixed(1)} |`),
  ].join('\n');
}
