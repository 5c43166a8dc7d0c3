// What the local kubelet runs for a container: Kubernetes' rule for command/args over the image's
// Entrypoint/Cmd, then a Node entry point past known init wrappers, the script mapped from the
// image's WORKDIR to the host folder that stands for it.
import t from 'tap';
import { commandLine, NODE_ENTRY_LABEL } from '../local-cluster/cluster/kubelet/container-runtime.js';
import type { LocalImage } from '../local-cluster/cluster/kubelet/images.js';

const image = (over: Partial<LocalImage> = {}): LocalImage => ({ entrypoint: [], cmd: [], workingDir: '/app', root: '/host/copy', env: [], labels: {}, ...over });

t.test('this repository\'s image: node dist/src/main.js in the working tree, the container\'s args after it', async (t) => {
  const repo = image({ entrypoint: ['node', 'dist/src/main.js'], root: '/repo' });
  t.same(commandLine({ args: ['--log-level=debug'] }, repo), { argv: ['/repo/dist/src/main.js', '--log-level=debug'], script: 0, cwd: '/repo' });
});

t.test('Kubernetes\' combination: command replaces Entrypoint and drops Cmd; args replace Cmd', async (t) => {
  const built = image({ entrypoint: ['docker-entrypoint.sh'], cmd: ['node', 'server.js', '--cmd'] });
  t.same(commandLine({}, built), { argv: ['/host/copy/server.js', '--cmd'], script: 0, cwd: '/host/copy' }, 'the node image\'s wrapper with CMD node ...');
  t.same(commandLine({ args: ['node', '-r', './trace.js', 'server.js', '--arg'] }, built), { argv: ['-r', './trace.js', '/host/copy/server.js', '--arg'], script: 2, cwd: '/host/copy' }, 'an option with a value is not the script');
  t.same(commandLine({ command: ['node', '/app/other.js'] }, built), { argv: ['/host/copy/other.js'], script: 0, cwd: '/host/copy' }, 'command without args: no Cmd');
  t.same(commandLine({}, image({ entrypoint: ['/sbin/tini', '--', 'node', 'dist/main.js'] })), { argv: ['/host/copy/dist/main.js'], script: 0, cwd: '/host/copy' }, 'tini --');
  t.same(commandLine({}, image({ entrypoint: ['docker-entrypoint.sh'], cmd: ['server.js'] })), { argv: ['/host/copy/server.js'], script: 0, cwd: '/host/copy' }, 'docker-entrypoint.sh runs node on a script');
});

t.test('a label names the entry point of an image whose command is not node', async (t) => {
  const labelled = image({ entrypoint: ['/entry.sh'], cmd: ['--port=9443'], labels: { [NODE_ENTRY_LABEL]: 'lib/serve.js' } });
  t.same(commandLine({}, labelled), { argv: ['/host/copy/lib/serve.js', '--port=9443'], script: 0, cwd: '/host/copy' });
  t.same(commandLine({ args: ['--port=1'] }, labelled), { argv: ['/host/copy/lib/serve.js', '--port=1'], script: 0, cwd: '/host/copy' }, 'the container\'s args replace Cmd');
});

t.test('what cannot run says why', async (t) => {
  t.match(commandLine({}, image({ entrypoint: ['nginx', '-g', 'daemon off;'] })), { error: /runs Node entry points only: \["nginx","-g","daemon off;"\] does not start node .*kube-admission-server\.node-entry=SCRIPT/ });
  t.match(commandLine({}, image({ cmd: ['node'] })), { error: /names no script/ }, 'node alone is a REPL');
  t.match(commandLine({}, image({ cmd: ['node', '/opt/elsewhere.js'] })), { error: /\/opt\/elsewhere\.js is outside the image's WORKDIR \/app/ });
});
