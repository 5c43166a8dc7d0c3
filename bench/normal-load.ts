/**
 * Steady traffic from a well-behaved caller, the way kube-apiserver sends it: a few keep-alive
 * connections, each sending a review, awaiting the answer and pausing. Every answer is checked
 * (200, uid echoed, allowed) and timed under the phase it started in.
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { sleep } from '../src/util/abort.js';
import { request } from '../test/support/server/server-harness.js';
import { podCreateReview } from './pod-review.js';

export interface PhaseFigures {
  served: number;
  failed: number;
  latenciesMs: number[];
  /** The first few failures, for the report. */
  failures: string[];
}

const PATH = '/validate/require-labels?timeout=10s';

export class NormalLoad {
  /** The label the next requests are counted under. */
  phase = 'before';
  readonly phases = new Map<string, PhaseFigures>();
  readonly #agent: https.Agent;
  readonly #stop = new AbortController();
  readonly #workers: Promise<void>[] = [];

  constructor(
    private readonly port: number,
    private readonly caPem: string,
    private readonly options: { workers: number; pauseMs: number },
  ) {
    this.#agent = new https.Agent({ keepAlive: true, maxSockets: options.workers });
  }

  start(): void {
    for (let i = 0; i < this.options.workers; i++) this.#workers.push(this.#work());
  }

  /** Idempotent: waits for the requests in flight, then closes the connections. */
  async stop(): Promise<void> {
    if (!this.#stop.signal.aborted) this.#stop.abort(new Error('load stopped'));
    await Promise.all(this.#workers);
    this.#agent.destroy();
  }

  figures(phase: string): PhaseFigures {
    let figures = this.phases.get(phase);
    if (!figures) this.phases.set(phase, (figures = { served: 0, failed: 0, latenciesMs: [], failures: [] }));
    return figures;
  }

  async #work(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      await this.#send();
      await sleep(this.options.pauseMs, this.#stop.signal).catch(() => undefined);
    }
  }

  async #send(): Promise<void> {
    const review = podCreateReview();
    const uid = randomUUID();
    (review['request'] as { uid: string }).uid = uid;
    const figures = this.figures(this.phase);
    const started = performance.now();
    let problem: string | undefined;
    try {
      const reply = await request(this.port, PATH, review, { ca: this.caPem, agent: this.#agent });
      const response = (reply.json as { response?: { uid?: string; allowed?: boolean } } | undefined)?.response;
      if (reply.status !== 200 || response?.uid !== uid || response.allowed !== true) problem = `HTTP ${reply.status}: ${reply.text.slice(0, 160)}`;
    } catch (error) {
      problem = (error as Error).message;
    }
    if (problem === undefined) {
      figures.served += 1;
      figures.latenciesMs.push(performance.now() - started);
    } else {
      figures.failed += 1;
      if (figures.failures.length < 5) figures.failures.push(problem);
    }
  }
}
