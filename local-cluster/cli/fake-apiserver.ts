/**
 * Starts the Kubernetes API test double alone, for manual trials (`npm run fake-apiserver`).
 * A local stand-in for the parts of kube-apiserver this project uses, not a cluster.
 *
 *   --port N          listen port (default 6443; 0 = any free port)
 *   --host H          listen address (default 127.0.0.1)
 *   --token T         bearer token (default: random)
 *   --kubeconfig P    where to write the kubeconfig (default: <tmpdir>/fake-apiserver-<pid>.kubeconfig)
 *   --namespace NS    extra namespace to create (repeatable); the first one is the kubeconfig's namespace
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startFakeApiServer } from '../fake-apiserver/index.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '6443' },
      host: { type: 'string', default: '127.0.0.1' },
      token: { type: 'string' },
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', multiple: true, default: [] },
    },
  });
  const namespaces = values.namespace ?? [];
  const api = await startFakeApiServer({ port: Number(values.port), host: values.host, token: values.token, namespaces });
  const kubeconfig = values.kubeconfig ?? join(tmpdir(), `fake-apiserver-${process.pid}.kubeconfig`);
  await api.writeKubeconfig(kubeconfig, { namespace: namespaces[0] });
  process.stdout.write(`fake-apiserver listening on ${api.url}\nkubeconfig: ${kubeconfig}\n`);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1); // a second signal: leave at once
    stopping = true;
    process.stdout.write(`${signal}: stopping\n`);
    const deadline = setTimeout(() => process.exit(1), 3000);
    deadline.unref();
    api
      .close()
      .then(() => (values.kubeconfig ? undefined : rm(kubeconfig, { force: true })))
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`fake-apiserver: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
