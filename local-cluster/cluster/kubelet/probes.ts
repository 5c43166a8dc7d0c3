/**
 * Probes as the kubelet's prober runs them: httpGet (2xx and 3xx succeed, HTTPS without
 * verifying the certificate, named ports resolved against the container's ports) and tcpSocket,
 * each with its timeout; per probe a worker ticking every periodSeconds after
 * initialDelaySeconds, with success and failure thresholds. Liveness and readiness wait for the
 * startup probe; once it succeeds the readiness probe runs at once instead of at its next tick,
 * as kubelet's prober manager triggers it when a started container is not yet ready. A failed
 * startup or liveness probe has the container restarted. exec and grpc probes cannot run without
 * the container's filesystem: they fail and say so.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { rec, records } from '../workload-objects.js';

type Json = Record<string, unknown>;

export type ProbeKind = 'startup' | 'readiness' | 'liveness';

export interface ProbeResult {
  ok: boolean;
  /** The text of the Unhealthy event on failure. */
  message: string;
}

function resolvePort(container: Json, port: unknown): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(String(port))) return Number(port);
  const named = records(container.ports).find((p) => p.name === port);
  return typeof named?.containerPort === 'number' ? named.containerPort : undefined;
}

function httpProbe(get: Json, host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  const scheme = String(get.scheme ?? 'HTTP').toLowerCase();
  const path = String(get.path ?? '/');
  const url = `${scheme}://${host}:${port}${path}`;
  const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.33', Accept: '*/*' };
  for (const header of records(get.httpHeaders)) headers[String(header.name)] = String(header.value);
  const send = scheme === 'https' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const request = send({ host, port, path, method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false }, (response) => {
      response.resume();
      const code = response.statusCode ?? 0;
      resolve(code >= 200 && code < 400 ? { ok: true, message: '' } : { ok: false, message: `HTTP probe failed with statuscode: ${code}` });
    });
    request.on('timeout', () => {
      request.destroy();
      resolve({ ok: false, message: `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const text = error.code === 'ECONNREFUSED' ? `dial tcp ${host}:${port}: connect: connection refused` : error.message;
      resolve({ ok: false, message: `Get "${url}": ${text}` });
    });
    request.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve({ ok: true, message: '' });
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
    });
    socket.once('error', () => resolve({ ok: false, message: `dial tcp ${host}:${port}: connect: connection refused` }));
  });
}

export function runProbe(probe: Json, container: Json, podIp: string): Promise<ProbeResult> {
  const timeoutMs = Number(probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const get = rec(probe.httpGet);
    const port = resolvePort(container, get.port);
    if (port === undefined) return Promise.resolve({ ok: false, message: `port ${String(get.port)} is not a port of the container` });
    return httpProbe(get, String(get.host ?? podIp), port, timeoutMs);
  }
  if (probe.tcpSocket) {
    const socket = rec(probe.tcpSocket);
    const port = resolvePort(container, socket.port);
    if (port === undefined) return Promise.resolve({ ok: false, message: `port ${String(socket.port)} is not a port of the container` });
    return tcpProbe(String(socket.host ?? podIp), port, timeoutMs);
  }
  return Promise.resolve({ ok: false, message: 'the local kubelet runs only httpGet and tcpSocket probes (exec and grpc need the container)' });
}

export interface ProberEvents {
  /** Started or ready changed: the Pod's status needs writing. */
  changed(): void;
  /** The startup or liveness probe failed failureThreshold times: restart the container. */
  kill(kind: ProbeKind, message: string): void;
  /** An Unhealthy event. */
  unhealthy(kind: ProbeKind, message: string): void;
}

const KIND_TEXT: Record<ProbeKind, string> = { startup: 'Startup', readiness: 'Readiness', liveness: 'Liveness' };

/** One probe's worker: its counts, its next tick, whether a run is under way. */
interface ProbeWorker {
  kind: ProbeKind;
  probe: Json;
  successes: number;
  failures: number;
  timer?: NodeJS.Timeout;
  running: boolean;
}

/** The three probe workers of one container run. */
export class ContainerProber {
  started: boolean;
  ready = false;
  readonly #workers = new Map<ProbeKind, ProbeWorker>();
  #stopped = false;

  constructor(
    private readonly container: Json,
    private readonly podIp: string,
    private readonly events: ProberEvents,
    /** Multiplies the startup probe's failureThreshold: see KubeletOptions.slowStart. */
    private readonly slowStart = 1,
  ) {
    this.started = container.startupProbe === undefined;
  }

  start(): void {
    for (const kind of ['startup', 'readiness', 'liveness'] as const) {
      const probe = this.container[`${kind}Probe`];
      if (probe === undefined || probe === null) continue;
      const worker: ProbeWorker = { kind, probe: rec(probe), successes: 0, failures: 0, running: false };
      this.#workers.set(kind, worker);
      this.schedule(worker, Number(worker.probe.initialDelaySeconds ?? 0) * 1000);
    }
    // Without a readiness probe a started container is ready at once.
    if (this.container.readinessProbe === undefined && this.started) {
      this.ready = true;
      this.events.changed();
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const worker of this.#workers.values()) clearTimeout(worker.timer);
  }

  /**
   * The Pod is being deleted: the kubelet stops the startup and liveness probes (a failing
   * liveness probe must not restart a container that is shutting down) and goes on with the
   * readiness probe, so the Pod's Ready condition, and the EndpointSlice's `serving`, follow
   * what the container answers until it exits (prober/worker.go).
   */
  terminating(): void {
    for (const kind of ['startup', 'liveness'] as const) {
      const worker = this.#workers.get(kind);
      if (worker) clearTimeout(worker.timer);
      this.#workers.delete(kind);
    }
    this.runNow('readiness');
  }

  private schedule(worker: ProbeWorker, delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(worker.timer);
    worker.timer = setTimeout(() => {
      worker.timer = undefined;
      void this.tick(worker);
    }, delayMs);
    worker.timer.unref();
  }

  /** Runs a worker's probe now rather than at its next tick (unless a run is under way). */
  private runNow(kind: ProbeKind): void {
    const worker = this.#workers.get(kind);
    if (!worker || worker.running || this.#stopped) return;
    this.schedule(worker, 0);
  }

  private async tick(worker: ProbeWorker): Promise<void> {
    const { kind, probe } = worker;
    if (this.#workers.get(kind) !== worker) return; // stopped for a terminating Pod
    const period = Number(probe.periodSeconds ?? 10) * 1000;
    // Readiness and liveness probes wait for the startup probe.
    if (kind !== 'startup' && !this.started) return this.schedule(worker, period);
    worker.running = true;
    const result = await runProbe(probe, this.container, this.podIp);
    worker.running = false;
    if (this.#stopped) return;
    if (result.ok) {
      worker.failures = 0;
      worker.successes += 1;
      if (worker.successes >= Number(probe.successThreshold ?? 1)) this.succeeded(kind);
      if (kind === 'startup') return; // done once it succeeded
    } else {
      worker.successes = 0;
      worker.failures += 1;
      this.events.unhealthy(kind, `${KIND_TEXT[kind]} probe failed: ${result.message}`);
      const threshold = Number(probe.failureThreshold ?? 3) * (kind === 'startup' ? this.slowStart : 1);
      if (worker.failures >= threshold) this.failed(kind, result.message);
      if (this.#stopped) return;
    }
    this.schedule(worker, period);
  }

  private succeeded(kind: ProbeKind): void {
    if (kind === 'startup' && !this.started) {
      this.started = true;
      if (this.container.readinessProbe === undefined) this.ready = true;
      this.events.changed();
      this.runNow('readiness');
    } else if (kind === 'readiness' && !this.ready) {
      this.ready = true;
      this.events.changed();
    }
  }

  private failed(kind: ProbeKind, message: string): void {
    if (kind === 'readiness') {
      if (this.ready) {
        this.ready = false;
        this.events.changed();
      }
      return;
    }
    this.stop();
    this.events.kill(kind, message);
  }
}
