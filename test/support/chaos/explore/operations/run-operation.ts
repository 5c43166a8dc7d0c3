/**
 * One scheduled operation, run to its end or stopped at its bound. Every operation finishes or ends
 * in an I3 violation that says why, when it gives up: a wait that was not met within its own bound
 * (what it waited for and what it saw last), a request that failed, or the operation's bound
 * passed (the waits in progress then, stopped at once; the operation may still put back what it
 * changed, with the administrator's own retries). The bound is the run's wait bound plus whatever
 * the operation holds on purpose (an outage's length, a hold at zero), so that no operation runs on
 * until the step's convergence deadline without saying why.
 */
import { sleep } from '../../../../../local-cluster/util/waits.js';
import type { Ledger } from '../invariants/ledger.js';
import { describe, type ScheduledOperation } from '../schedule.js';
import type { OperationContext, Sizes } from './context.js';
import { OPERATIONS } from './index.js';

/** How long `op` may take: the run's bound for an operation's waits, plus what it holds on purpose (scaled). */
export function operationBoundMs(op: Pick<ScheduledOperation, 'name' | 'params'>, sizes: Sizes): number {
  const held = OPERATIONS[op.name].heldMs?.(op.params) ?? 0;
  return sizes.waitMs + (held > 0 ? Math.max(100, Math.round(held * sizes.scale)) : 0);
}

/** Runs `op` after `delayMs`; resolves when it finished or gave up, its failure in the ledger (step `step`, 1-based). */
export async function runOperation(ctx: OperationContext, op: ScheduledOperation, delayMs: number, ledger: Ledger, step: number): Promise<void> {
  if (delayMs > 0) await sleep(delayMs, ctx.world.signal);
  const boundMs = operationBoundMs(op, ctx.sizes);
  const bound = new AbortController();
  const world = ctx.world.within(bound.signal);
  const seconds = Math.round(boundMs / 1000);
  ctx.world.note(`start ${describe(op)}`);
  const timer = setTimeout(() => {
    const waits = world.pendingWaits();
    ledger.add('I3', `step ${step}: ${op.name} did not finish within its bound of ${seconds} s: ${waits.length > 0 ? `waiting for ${waits.join('; ')}` : 'no wait in progress (in a request or a hold)'}`);
    bound.abort(new Error(`stopped at the operation's bound of ${seconds} s`));
  }, boundMs);
  try {
    const note = await OPERATIONS[op.name].run({ ...ctx, world }, op.params);
    ctx.world.note(`done  ${op.name}: ${note}`);
  } catch (error) {
    const message = (error as Error).message;
    ctx.world.note(`${op.name} did not complete: ${message}`);
    // Past the bound it is counted already; a stopped run is no failure of the operation.
    if (!bound.signal.aborted && !ctx.world.signal.aborted) ledger.add('I3', `step ${step}: ${op.name} did not complete: ${message}`);
  } finally {
    clearTimeout(timer);
  }
}
