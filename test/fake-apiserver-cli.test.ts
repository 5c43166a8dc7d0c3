// The double started alone as a process (npm run fake-apiserver): prints its URL and a kubeconfig,
// serves client-node through it, and stops cleanly on SIGTERM.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { EXIT_MARGIN_MS, EXIT_MS, STARTUP_MS, within } from './support/deadline.js';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';

// The compiled CLI, as `npm run fake-apiserver` runs it (npm test builds first): loading the
// TypeScript through tap's loader instead took 7 s alone and over 20 s on a busy machine.
const cli = fileURLToPath(new URL('../dist/local-cluster/cli/fake-apiserver.js', import.meta.url));

t.test('the CLI serves until SIGTERM and prints where to connect', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const node = unhookedNode([cli, '--port', '0', '--kubeconfig', kubeconfigPath, '--namespace', 'trial']);
  const child = spawn(node.command, node.args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no kubeconfig line within ${STARTUP_MS} ms: ${output}`)), STARTUP_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('kubeconfig: ')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${output}`)));
  });
  await ready;
  t.match(output, /^fake-apiserver listening on https:\/\/127\.0\.0\.1:\d+\n/);
  t.match(output, `kubeconfig: ${kubeconfigPath}\n`);
  t.equal((await stat(kubeconfigPath)).mode & 0o777, 0o600);

  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const namespaces = await within(EXIT_MS, 'a namespace list from the CLI', kc.makeApiClient(CoreV1Api).listNamespace());
  t.ok(namespaces.items.some((ns) => ns.metadata?.name === 'trial'), 'the extra namespace exists');

  const exited = once(child, 'exit');
  const stopping = performance.now();
  child.kill('SIGTERM');
  const [code] = (await within(EXIT_MS, 'the fake apiserver CLI to exit after SIGTERM', exited)) as [number | null];
  t.equal(code, 0, 'a clean exit, not the 3 s forced exit (code 1)');
  t.ok(performance.now() - stopping < 3000 + EXIT_MARGIN_MS, 'stops promptly');
  t.match(output, 'SIGTERM: stopping');
});
