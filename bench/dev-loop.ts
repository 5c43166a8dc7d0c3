/**
 * The dev loop's edit-to-served time: `kube-admission-server dev` against the API test double
 * (three kube-apiservers), the double's admission caller sending a Pod CREATE every few
 * milliseconds; an edit is a rewrite of a file the handler module imports (as tsc writes it),
 * served once the caller's denial carries the new text. The reference, measured in the same run:
 * what the edit would cost without the reload, a restart of the process (SIGINT, its deletion of
 * the configurations, a fresh start to the first served denial).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdmissionCaller, type AdmissionCaller } from '../local-cluster/admission-caller/index.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture } from '../test/support/kube/cluster-harness.js';
import { writeHandlerProject, writeMessage } from '../test/support/kube/dev-loop.js';
import { ChildServer } from '../test/support/server/child-server.js';
import { CleanupList } from './lifecycle.js';
import { listRounded, median } from './stats.js';

const EDITS = 9;
const RESTARTS = 3;
const DEADLINE_MS = 60_000;

export interface DevLoopResult {
  editToServedMs: number[];
  restartToServedMs: number[];
  writesDuringEdits: number;
  admittedDuringEdits: number;
}

async function servedText(caller: AdmissionCaller): Promise<string> {
  const result = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  return result.allowed ? 'ADMITTED' : (result.status.message ?? '');
}

/** Sends writes until one is denied with `text`; the count of writes and of admitted ones. */
async function untilServed(caller: AdmissionCaller, text: string): Promise<{ writes: number; admitted: number }> {
  const deadline = performance.now() + DEADLINE_MS;
  let writes = 0;
  let admitted = 0;
  for (;;) {
    const served = await servedText(caller).catch(() => 'FAILED');
    writes++;
    if (served === 'ADMITTED') admitted++;
    if (served.includes(text)) return { writes, admitted };
    if (performance.now() > deadline) throw new Error(`"${text}" not served within ${DEADLINE_MS} ms (last: ${served})`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function startDev(cluster: ClusterHarness, dir: string, module: string): ChildServer {
  return new ChildServer(['dev', '--port', '0', '--health-port', '0', '--handlers', module, '--reachable-at', '127.0.0.1', '--cert-dir', join(dir, 'certs')], { KUBECONFIG: cluster.kubeconfig });
}

export async function runDevLoopBench(log: (line: string) => void): Promise<DevLoopResult> {
  const cleanups = new CleanupList();
  try {
    const cluster = await ClusterHarness.start(cleanups);
    const dir = await mkdtemp(join(tmpdir(), 'kas-bench-dev-'));
    cleanups.teardown(() => rm(dir, { recursive: true, force: true }));
    const module = await writeHandlerProject(dir, 'edit 0');
    const caller = createAdmissionCaller({ api: cluster.api, resolveService: () => { throw new Error('registered by Service, not URL'); } });
    cleanups.teardown(() => caller.close());

    const restartToServedMs: number[] = [];
    let dev: ChildServer | undefined;
    for (let restart = 0; restart <= RESTARTS; restart++) {
      if (dev) await dev.stop('SIGINT');
      const startedAt = performance.now();
      dev = startDev(cluster, dir, module);
      const child = dev;
      cleanups.teardown(() => child.stop('SIGKILL'));
      await dev.waitForMessage('ready', DEADLINE_MS);
      await untilServed(caller, 'edit 0');
      // The first start also generates the CA; the restarts reuse it, as a developer's would.
      if (restart > 0) restartToServedMs.push(performance.now() - startedAt);
      log(`dev loop: start ${restart} served after ${Math.round(performance.now() - startedAt)} ms`);
    }

    const editToServedMs: number[] = [];
    let writesDuringEdits = 0;
    let admittedDuringEdits = 0;
    for (let edit = 1; edit <= EDITS; edit++) {
      const editedAt = performance.now();
      await writeMessage(dir, `edit ${edit}`);
      const { writes, admitted } = await untilServed(caller, `edit ${edit}`);
      editToServedMs.push(performance.now() - editedAt);
      writesDuringEdits += writes;
      admittedDuringEdits += admitted;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    log(`dev loop: edits served after ${listRounded(editToServedMs)} ms`);
    await dev!.stop('SIGINT');
    return { editToServedMs, restartToServedMs, writesDuringEdits, admittedDuringEdits };
  } finally {
    await cleanups.run();
  }
}

export function devLoopReport(result: DevLoopResult): string {
  return [
    '| measurement | median | each |',
    '|---|---:|---|',
    `| edit of an imported file -> served (reload) | ${Math.round(median(result.editToServedMs))} ms | ${listRounded(result.editToServedMs)} |`,
    `| reference: SIGINT + fresh start -> served (restart) | ${Math.round(median(result.restartToServedMs))} ms | ${listRounded(result.restartToServedMs)} |`,
    `| writes admitted during the edits | ${result.admittedDuringEdits} of ${result.writesDuringEdits} | |`,
  ].join('\n');
}
