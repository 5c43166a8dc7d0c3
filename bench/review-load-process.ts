/**
 * A child process of the reports bench: AdmissionReviews POSTed to one server on a fixed schedule
 * (open loop, each latency from the moment it was due) until SIGTERM, then the latencies as one
 * JSON line on stdout. In a process of its own, so the API double the bench hosts (its lists,
 * watches and writes) never delays a review's send or its answer.
 *
 * Arguments: PORT PATH RATE; the review body on stdin (bench/reports.ts starts it).
 */
import { benchAgent, postReview } from './fixed-count-load.js';
import { median, percentile } from './stats.js';

const [port = '0', path = '/', rate = '20'] = process.argv.slice(2);
const REQUEST_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  const agent = benchAgent(32);
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  let failed = 0;
  let stopped = false;
  process.on('SIGTERM', () => (stopped = true));
  const intervalMs = 1000 / Number(rate);
  const started = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      while (!stopped && started + next * intervalMs <= now) {
        const dueAt = started + next++ * intervalMs;
        pending.push(postReview(agent, { port: Number(port), path, body, requestTimeoutMs: REQUEST_TIMEOUT_MS }).then((ok) => (ok ? void latencies.push(performance.now() - dueAt) : void failed++)));
      }
      if (stopped) return resolve();
      setTimeout(tick, Math.max(0, started + next * intervalMs - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ reviews: latencies.length, failed, p50Ms: median(latencies), p99Ms: percentile(latencies, 99), maxMs: Math.max(0, ...latencies) })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
