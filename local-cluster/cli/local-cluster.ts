/**
 * `npm run local-cluster`: the local cluster (local-cluster/cluster) in the foreground,
 * printing the kubeconfig and the commands to try. Ctrl-C or SIGTERM stops the Pods and exits.
 *
 *   --port N          API port (default 6443; 0 = any free port)
 *   --host H          API address (default 127.0.0.1)
 *   --dir D           working directory: kubeconfig and Pod directories (default ./.local-cluster)
 *   --no-cert-manager leave cert-manager's CRDs and stand-in out
 *   --slow-start N    allow N times each startup probe's failureThreshold (default 1; a busy machine)
 *   --apiservers N    kube-apiservers in the control plane (default 3), each with its own caches
 *   --apiserver-lag L their propagation lags in milliseconds, comma-separated (default 0 each)
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_APISERVERS, startLocalCluster } from '../cluster/index.js';
import { repositoryRoot } from '../util/repository-root.js';
import { renderTryIt } from '../cluster/try-it.js';

/** UTC time of day with milliseconds: the tests line these up with their own clock. */
function stamp(): string {
  return new Date().toISOString().slice(11, 23);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '6443' },
      host: { type: 'string', default: '127.0.0.1' },
      dir: { type: 'string', default: '.local-cluster' },
      'no-cert-manager': { type: 'boolean', default: false },
      'slow-start': { type: 'string', default: '1' },
      apiservers: { type: 'string', default: String(DEFAULT_APISERVERS) },
      'apiserver-lag': { type: 'string' },
    },
  });
  const mainJs = resolve(repositoryRoot(), 'dist', 'src', 'main.js');
  if (!existsSync(mainJs)) throw new Error(`${mainJs} is missing: run \`npm run build\` first (npm run local-cluster does)`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, got ${values.port}`);
  const slowStart = Number(values['slow-start']);
  if (!Number.isInteger(slowStart) || slowStart < 1) throw new Error(`--slow-start must be a whole number from 1, got ${values['slow-start']}`);
  const apiservers = apiserverOptions(values.apiservers ?? String(DEFAULT_APISERVERS), values['apiserver-lag']);
  const cluster = await startLocalCluster({
    apiservers,
    slowStart,
    dir: resolve(values.dir ?? '.local-cluster'),
    port,
    host: values.host,
    certManager: !values['no-cert-manager'],
    log: (message) => process.stdout.write(`${stamp()} ${message}\n`),
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${port} is taken: pass --port 0 for any free port (or stop what listens there)`);
    throw error;
  });
  process.stdout.write(
    [
      `local cluster: ${cluster.api.url} (the Kubernetes API test double with controllers and a local kubelet; not a real cluster)`,
      `kubeconfig: ${cluster.kubeconfig}`,
      `control plane: ${cluster.api.apiservers.map((a) => `${a.name} (lag ${a.lagMs} ms)`).join(', ')}`,
      `pod network: ${cluster.kubelet.network.prefix}0/24, Pods run as processes of this Node (${process.version})`,
      ...(slowStart > 1 ? [`startup probes: ${slowStart} times their failureThreshold (--slow-start)`] : []),
      '',
      'Try it:',
      '',
      renderTryIt(),
      '',
      'Ctrl-C stops the cluster (its Pods get SIGTERM).',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1); // a second signal: leave at once
    stopping = true;
    process.stdout.write(`${signal}: stopping the Pods and the cluster\n`);
    const deadline = setTimeout(() => process.exit(1), 15_000);
    deadline.unref();
    cluster.close(5).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`local-cluster: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Started by a test with an IPC channel: when the test process goes, so does the cluster.
  if (process.connected) process.on('disconnect', () => stop('parent gone'));
}

/** `--apiservers` and `--apiserver-lag` as the control plane's options. */
function apiserverOptions(count: string, lags: string | undefined): { lagMs: number }[] {
  const n = Number(count);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`--apiservers must be a whole number from 1 to 9, got ${count}`);
  const lagList = lags === undefined ? [] : lags.split(',').map((entry) => entry.trim());
  if (lagList.length > n) throw new Error(`--apiserver-lag names ${lagList.length} lags for ${n} kube-apiservers: give at most one per kube-apiserver`);
  return Array.from({ length: n }, (_, index) => {
    const text = lagList[index] ?? '0';
    const lagMs = Number(text);
    if (!/^\d+$/.test(text) || lagMs > 60_000) throw new Error(`--apiserver-lag takes milliseconds from 0 to 60000, comma-separated (e.g. 0,200,2000), got "${text}"`);
    return { lagMs };
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`local-cluster: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
