/** A run's report: the figures, the violations by invariant, the seed and how to replay it, and the operation log when something failed. */
import { INVARIANTS, type Invariant } from './invariants/ledger.js';
import { violationTotal, type RunResult } from './run.js';

export const replayCommand = (result: Pick<RunResult, 'seed' | 'minutes' | 'mode' | 'steps' | 'scale'>): string =>
  `npm run chaos -- --seed ${result.seed} --minutes ${result.minutes} --steps ${result.steps.length}${result.scale === 1 ? '' : ` --scale ${result.scale}`}`;

export function summaryLine(result: RunResult): string {
  const byInvariant = (Object.keys(INVARIANTS) as Invariant[]).map((i) => `${i} ${result.violations[i]}`).join(', ');
  return `seed ${result.seed} (${result.mode}): ${result.steps.length} steps, ${result.operations} operations, ${result.load.sent} writes, ${result.calls.calls} webhook calls; violations ${byInvariant}`;
}

export function textReport(result: RunResult): string {
  const failed = violationTotal(result) > 0;
  const converged = result.steps.flatMap((s) => (s.convergedAfterMs === undefined ? [] : [s.convergedAfterMs]));
  const lines = [
    `${failed ? 'FAILED' : 'passed'}: ${summaryLine(result)}`,
    `replay: ${replayCommand(result)}`,
    `wall ${(result.wallMs / 1000).toFixed(0)} s; worst event-loop lag of the run's process ${(result.worstEventLoopLagMs / 1000).toFixed(1)} s; policy versions ${result.policyVersions}; convergence after a step: worst ${((Math.max(0, ...converged)) / 1000).toFixed(1)} s`,
    `load: ${JSON.stringify(result.load.byClass)} sent; admitted ${result.load.admitted}, denied ${result.load.denied}, refused by a failed call ${result.load.failedCall}, not admitted by the control plane (down, cut) ${result.load.controlPlane}, other ${result.load.other}`,
    `calls: ${result.calls.calls} (${result.calls.allowed} allowed, ${result.calls.denied} denied, ${result.calls.failed} failed: ${JSON.stringify(result.calls.failedByClass)}); apart: cut by a kube-apiserver restart ${result.calls.cutByApiserverRestart}, lost to a SIGKILL ${result.calls.lostToSigkill}, cut by the keep-alive close race at a replica's exit ${result.calls.closeRaces}, "not served" on failurePolicy Ignore ${result.calls.notServedOnIgnore}`,
    `processes: ${result.processes.exits} exits, ${result.processes.sigterms} after SIGTERM (worst ${result.processes.worstSigtermToExitMs} ms), ${result.processes.sigkilledByRun} SIGKILLed by the run; exits with problems: ${result.processes.uncleanExits.length}`,
    `uninstall left: ${result.uninstallLeftovers.join(', ') || 'nothing'} (main's known leftovers are reported, not counted: UNINSTALL_LEFTOVERS_ON_MAIN)`,
  ];
  for (const exit of result.processes.uncleanExits.slice(0, 5)) lines.push(`  exit with problems: ${exit}`);
  for (const sample of result.load.otherSamples) lines.push(`  unexpected answer: ${sample}`);
  if (failed) {
    lines.push('', 'violations (the first of each invariant):');
    for (const v of result.firstViolations) lines.push(`  ${v.invariant} at ${(v.atMs / 1000).toFixed(1)} s: ${v.what}`);
    lines.push('', 'operation log:');
    for (const line of result.log) lines.push(`  ${(line.atMs / 1000).toFixed(1).padStart(7)} s  ${line.text}`);
  }
  return lines.join('\n');
}
