// `npm run local-cluster`'s control-plane flags: a wrong --apiservers or --apiserver-lag names the
// flag and the fix, exits 1, and starts nothing. (The helm and install tests run the defaults.)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { EXIT_MS, within } from './support/deadline.js';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';

// The compiled CLI, as `npm run local-cluster` runs it (npm test builds first).
const cli = fileURLToPath(new URL('../dist/local-cluster/cli/local-cluster.js', import.meta.url));

async function run(t: Test, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'local-cluster-flags-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const node = unhookedNode([cli, '--port', '0', '--dir', dir, ...args]);
  const child = spawn(node.command, node.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await within(EXIT_MS, `local-cluster ${args.join(' ')} to exit`, once(child, 'exit'))) as [number | null];
  return { code, stderr };
}

const cases: [string[], RegExp][] = [
  [['--apiservers', '0'], /--apiservers must be a whole number from 1 to 9, got 0/],
  [['--apiservers', '2', '--apiserver-lag', '0,5,9'], /--apiserver-lag names 3 lags for 2 kube-apiservers/],
  [['--apiserver-lag', '0,2s'], /--apiserver-lag takes milliseconds from 0 to 60000, comma-separated \(e\.g\. 0,200,2000\), got "2s"/],
];
for (const [args, message] of cases) {
  t.test(`local-cluster ${args.join(' ')}`, async (t) => {
    const { code, stderr } = await run(t, args);
    t.equal(code, 1);
    t.match(stderr, message);
  });
}
