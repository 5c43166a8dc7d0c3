/**
 * I4 (the Lease part) and I5, from the kubelet's record of every container exit and the Lease in
 * the store:
 * - a server process exits only when asked: by the kubelet's SIGTERM (a Pod deleted) or by the
 *   run's SIGKILL; any other exit is a crash;
 * - after a SIGTERM it exits within SHUTDOWN_DELAY + SHUTDOWN_TIMEOUT + slack and never needs the
 *   kubelet's SIGKILL;
 * - a clean exit leaves the Lease released (or held by another): the server releases it on the
 *   way out;
 * - a holder that died without releasing (SIGKILL, or a release the API refused) is replaced once
 *   the Lease expires, while a ready replica exists and the API answers the server to take it.
 * Exit codes other than 0 after a SIGTERM are kept for the report (a shutdown with problems).
 */
import type { ContainerExit } from '../../../../../local-cluster/cluster/kubelet/kubelet-deps.js';
import type { LagMonitor } from '../lag-monitor.js';
import type { CallJudge } from './calls.js';
import type { Ledger } from './ledger.js';
import { containerPid, isReady, LEASE, NS, type World } from '../world.js';

/** The shipped Deployment's SHUTDOWN_DELAY. */
const SHUTDOWN_DELAY_MS = 3000;

const oneLine = (text: string | undefined): string => (text ?? '').replace(/\s+/g, ' ').slice(-500);

export interface ProcessFigures {
  exits: number;
  sigterms: number;
  worstSigtermToExitMs: number;
  sigkilledByRun: number;
  /** Pod, code and the last lines of exits after SIGTERM with a code other than 0. */
  uncleanExits: string[];
}

export class ProcessJudge {
  readonly figures: ProcessFigures = { exits: 0, sigterms: 0, worstSigtermToExitMs: 0, sigkilledByRun: 0, uncleanExits: [] };
  readonly #killedByRun = new Set<number>();
  readonly #seenPids = new Set<number>();
  #nextExit = 0;
  /** The Lease holder and since when (Date.now()) it has not been a running process. */
  #deadHolder: { name: string; since: number; reported: boolean } | undefined;
  /** Since when (Date.now()) some replica has been ready without a break, while a dead holder is named. */
  #readySince: number | undefined;
  /** Windows open now in which the API refuses every request of the server (an outage, a 429 or 5xx burst). */
  #refusing = 0;

  constructor(
    private readonly world: World,
    private readonly ledger: Ledger,
    private readonly bounds: { sigtermToExitMs: number; leaseTakeoverMs: number },
    private readonly lag: LagMonitor,
    private readonly calls: CallJudge,
  ) {}

  /** The run is about to SIGKILL this process: its exit is asked for. */
  expectKill(pid: number): void {
    this.#killedByRun.add(pid);
  }

  /**
   * apiRefusing: the API refuses the server's requests from now until the returned function is
   * called; no replica can read the Lease meanwhile, so the takeover bound starts after it.
   */
  apiRefusing(): () => void {
    this.#refusing++;
    let ended = false;
    return () => {
      if (!ended) this.#refusing--;
      ended = true;
    };
  }

  /** Every pid a server process ever had (for the final check that none is left running). */
  get pids(): readonly number[] {
    return [...this.#seenPids];
  }

  /** Looks at new exits and at the Lease; called on a timer and at the end. */
  check(): void {
    for (const pod of this.world.pods()) {
      const pid = containerPid(pod);
      if (pid) this.#seenPids.add(pid);
    }
    const exits = this.world.cluster.kubelet.exits;
    for (; this.#nextExit < exits.length; this.#nextExit++) {
      const exit = exits[this.#nextExit]!;
      if (exit.namespace === NS) this.#judgeExit(exit);
    }
    this.#judgeLease();
  }

  #judgeExit(exit: ContainerExit): void {
    this.figures.exits++;
    if (this.#killedByRun.has(exit.pid)) {
      this.figures.sigkilledByRun++;
      return;
    }
    if (exit.sigtermAt === undefined) {
      this.ledger.add('I5', `${exit.pod} (pid ${exit.pid}) exited on its own: code ${exit.code}, signal ${exit.signal}; last lines: ${oneLine(exit.lastLines)}`);
      return;
    }
    this.figures.sigterms++;
    const ms = exit.exitedAt - exit.sigtermAt;
    // Its listener closed after the delay (SHUTDOWN_DELAY, 3 s; a second of slack for this process's timing).
    const toPerformance = (epochMs: number): number => epochMs - performance.timeOrigin;
    this.calls.closing({ from: toPerformance(exit.sigtermAt + SHUTDOWN_DELAY_MS - 1000), to: toPerformance(exit.exitedAt + 1000) });
    this.figures.worstSigtermToExitMs = Math.max(this.figures.worstSigtermToExitMs, ms);
    if (exit.signal === 'SIGKILL') this.ledger.add('I5', `${exit.pod} needed the kubelet's SIGKILL: still running ${exit.graceSeconds} s after SIGTERM`);
    else {
      // This process saw the exit late by as much as its own event loop lagged meanwhile.
      const lagMs = Math.round(this.lag.worstBetween(exit.sigtermAt, exit.exitedAt));
      if (ms > this.bounds.sigtermToExitMs + lagMs) this.ledger.add('I5', `${exit.pod} exited ${ms} ms after SIGTERM (bound ${this.bounds.sigtermToExitMs} ms + this process's event-loop lag ${lagMs} ms)`);
    }
    if (exit.code !== 0 && exit.signal === null) this.figures.uncleanExits.push(`${exit.pod}: code ${exit.code}: ${oneLine(exit.lastLines)}`);
    if (exit.code === 0 && this.world.leaseHolder() === exit.pod) this.ledger.add('I4', `${exit.pod} exited cleanly but the Lease ${LEASE} still names it`);
  }

  #judgeLease(): void {
    const holder = this.world.leaseHolder();
    const pods = this.world.pods();
    const running = holder !== '' && pods.some((p) => p.metadata?.name === holder && containerPid(p) !== undefined && !p.metadata?.deletionTimestamp);
    if (holder === '' || running) {
      this.#deadHolder = undefined;
      this.#readySince = undefined;
      return;
    }
    if (this.#deadHolder?.name !== holder) this.#deadHolder = { name: holder, since: Date.now(), reported: false };
    // While the API refuses the server, nobody can read the record: as good as nobody ready.
    const someoneReady = this.#refusing === 0 && pods.some((p) => isReady(p) && !p.metadata?.deletionTimestamp);
    // A candidate measures the lease duration from when it first saw the record (client-go's rule:
    // no trust in other nodes' clocks), so the bound runs from when a ready replica exists, not from
    // the holder's death: after a scale to zero the new replicas cannot know how old the record is.
    if (!someoneReady) this.#readySince = undefined;
    else this.#readySince ??= Date.now();
    const waiting = Math.min(Date.now() - this.#deadHolder.since, Date.now() - (this.#readySince ?? Date.now()));
    if (!this.#deadHolder.reported && someoneReady && waiting > this.bounds.leaseTakeoverMs) {
      this.#deadHolder.reported = true;
      this.ledger.add(
        'I4',
        `the Lease still names ${holder}, not running for ${Math.round((Date.now() - this.#deadHolder.since) / 1000)} s, while a ready replica could take it for ${Math.round(waiting / 1000)} s`,
      );
    }
  }
}
