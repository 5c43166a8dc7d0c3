import { COMMANDS } from '../src/commands/index.js';
import t from 'tap';
import { loadConfig, type EnvironmentProbe } from '../src/config/load-config.js';
import { renderHelp, renderServerFlags } from '../src/config/help.js';
import { FLAGS } from '../src/config/flags.js';
import { parseDuration } from '../src/config/duration.js';

function probe(env: Record<string, string> = {}, files: Record<string, string> = {}): EnvironmentProbe {
  return {
    env,
    readFile: (path) => files[path],
    exists: (path) => path in files,
    hostname: () => 'My-Laptop',
  };
}

const SA = '/var/run/secrets/kubernetes.io/serviceaccount';

t.test('defaults outside a cluster: local mode, nothing registered', async (t) => {
  const result = loadConfig([], probe(), COMMANDS);
  t.equal(result.kind, 'run');
  if (result.kind !== 'run') return;
  const { config } = result;
  t.equal(result.command, 'serve');
  t.equal(config.port, 8443);
  t.equal(config.healthPort, 8080);
  t.equal(config.host, '127.0.0.1');
  t.equal(config.namespace, 'default');
  t.equal(config.podName, 'my-laptop');
  t.equal(config.serviceName, 'kube-admission-server');
  t.equal(config.configName, 'kube-admission-server');
  t.equal(config.tlsMode, 'generate');
  t.equal(config.clusterConfigured, false);
  t.equal(config.register, false);
  t.equal(config.teardown, 'auto');
  t.equal(config.shutdownTimeoutMs, 5000);
  t.equal(config.shutdownDelayMs, 0);
  t.equal(config.selfCheckTimeoutMs, 30_000);
  t.equal(config.leaseName, 'kube-admission-server-leader');
  t.match(config.policyFile, /\/policies\/example\.yaml$/);
  t.notMatch(config.policyFile, /dist/);
  t.match(config.certDir, /\/certs$/);
});

t.test('in a cluster: namespace from the service account, bind all (dual-stack), register on', async (t) => {
  const result = loadConfig([], probe({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, { [`${SA}/token`]: 'x', [`${SA}/namespace`]: 'webhooks\n' }), COMMANDS);
  if (result.kind !== 'run') return t.fail(`expected run, got ${JSON.stringify(result)}`);
  t.equal(result.config.namespace, 'webhooks');
  t.equal(result.config.host, '::', 'IPv6 and IPv4: an IPv6-only or IPv6-first cluster dials the pod IPv6 address');
  t.equal(result.config.inCluster, true);
  t.equal(result.config.register, true);
});

t.test('the listeners bind where a pod is reachable, unless --host says otherwise', async (t) => {
  const host = (argv: string[], env: Record<string, string>): string => {
    const result = loadConfig(argv, probe(env), COMMANDS);
    if (result.kind !== 'run') throw new Error(JSON.stringify(result));
    return result.config.host;
  };
  t.equal(host([], { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBECONFIG: '/tmp/kc' }), '::', 'a pod with a kubeconfig of its own is still a pod');
  t.equal(host([], { KUBECONFIG: '/tmp/kc' }), '127.0.0.1', 'a laptop against a cluster: loopback only');
  t.equal(host(['--host', '0.0.0.0'], { KUBERNETES_SERVICE_HOST: '10.96.0.1' }), '0.0.0.0', '--host wins');
  t.equal(host([], { KUBERNETES_SERVICE_HOST: '10.96.0.1', WEBHOOK_HOST: '10.244.1.7' }), '10.244.1.7', 'and so does WEBHOOK_HOST');
});

t.test('the policy file: serve defaults to the bundled example, dev to no rules (the handlers alone); --policy-file wins', async (t) => {
  const policyFile = (argv: string[]): string => {
    const result = loadConfig(argv, probe({ KUBECONFIG: '/tmp/kc' }), COMMANDS);
    if (result.kind !== 'run') throw new Error(JSON.stringify(result));
    return result.config.policyFile;
  };
  const dev = ['dev', '--handlers', 'dist/webhooks.js', '--reachable-at', '127.0.0.1'];
  t.match(policyFile([]), /\/policies\/example\.yaml$/);
  t.match(policyFile(dev), /\/policies\/handlers-only\.yaml$/);
  t.match(policyFile([...dev, '--policy-file', 'mine.yaml']), /\/mine\.yaml$/);
});

t.test('flags win over environment variables; durations, lists and booleans parse', async (t) => {
  const result = loadConfig(
    ['--port', '9443', '--shutdown-timeout=7s', '--no-register', '--extra-san', 'a.example.com, 10.1.2.3', 'render'],
    probe({ WEBHOOK_PORT: '1234', KUBECONFIG: '/tmp/kc', SHUTDOWN_DELAY: '1500ms', LEAF_VALIDITY: '90d' }), COMMANDS,
  );
  if (result.kind !== 'run') return t.fail(JSON.stringify(result));
  t.equal(result.command, 'render');
  t.equal(result.config.port, 9443);
  t.equal(result.config.shutdownTimeoutMs, 7000);
  t.equal(result.config.shutdownDelayMs, 1500);
  t.equal(result.config.register, false);
  t.equal(result.config.clusterConfigured, true);
  t.equal(result.config.leafValidityDays, 90);
  t.same(result.config.extraSans, ['a.example.com', '10.1.2.3']);
});

t.test('every problem is reported, one line each, naming the flag and the fix', async (t) => {
  const result = loadConfig(
    ['--port', '70000', '--tls-mode', 'magic', '--bogus', '--shutdown-timeout', 'soon', 'serve-now'],
    probe({ HEALTH_PORT: 'eighty', TEARDOWN: 'sometimes', WEBHOOK_SERVICE_NAME: 'Bad_Name' }), COMMANDS,
  );
  t.equal(result.kind, 'invalid');
  if (result.kind !== 'invalid') return;
  const text = result.problems.join('\n');
  t.match(text, /--bogus: unknown flag \(kube-admission-server --help lists the flags\)/);
  t.match(text, /"serve-now": unknown command/);
  t.match(text, /--port: "70000" is not a port; use a whole number from 1 to 65535/);
  t.match(text, /--health-port \(from HEALTH_PORT\): "eighty" is not a port/);
  t.match(text, /--tls-mode: "magic" is not supported; use one of: generate, files/);
  t.match(text, /--teardown \(from TEARDOWN\): "sometimes" is not supported; use one of: auto, always, never/);
  t.match(text, /--shutdown-timeout: "soon" is not a duration/);
  t.match(text, /--service-name \(from WEBHOOK_SERVICE_NAME\): "Bad_Name" is not a DNS-1123 label/);
  t.equal(result.problems.length, 8);
});

t.test('cross-field problems: same ports, register without a cluster, lease timings', async (t) => {
  const result = loadConfig(['--port', '8080', '--register', '--lease-renew-deadline', '20s'], probe(), COMMANDS);
  if (result.kind !== 'invalid') return t.fail('expected invalid');
  t.match(result.problems.join('\n'), /--port and --health-port are both 8080/);
  t.match(result.problems.join('\n'), /--register needs a cluster/);
  t.match(result.problems.join('\n'), /--lease-renew-deadline must be shorter than --lease-duration/);
  const missing = loadConfig(['--port'], probe(), COMMANDS);
  t.same(missing.kind === 'invalid' && missing.problems, ['--port: needs a value, e.g. --port=VALUE']);
});

t.test('--help lists every flag with its environment variable and default', async (t) => {
  const asked = loadConfig(['--help', '--port', 'x'], probe(), COMMANDS);
  t.equal(asked.kind, 'help');
  const help = asked.kind === 'help' ? asked.text : '';
  t.equal(renderHelp(), `Flags (a flag wins over its environment variable):\n${renderServerFlags()}\n`);
  for (const flag of FLAGS) {
    t.match(help, `--${flag.name}`);
    t.match(help, `env ${flag.env}; default: ${flag.defaultText}`);
  }
});

t.test('parseDuration understands Go durations and days', async (t) => {
  t.equal(parseDuration('5s'), 5000);
  t.equal(parseDuration('1m30s'), 90_000);
  t.equal(parseDuration('250ms'), 250);
  t.equal(parseDuration('1.5s'), 1500);
  t.equal(parseDuration('2d'), 172_800_000);
  t.equal(parseDuration('0'), 0);
  t.equal(parseDuration('5'), undefined);
  t.equal(parseDuration('s'), undefined);
  t.equal(parseDuration(''), undefined);
});

t.test('the background audit: its flags parse; it needs registration to run on a leader, render takes it without', async (t) => {
  const cluster = probe({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, { [`${SA}/token`]: 't', [`${SA}/namespace`]: 'kas' });
  const on = loadConfig(['--reports', 'objects', '--reports-api', 'wgpolicyk8s', '--reports-max-bytes', '64Ki'], probe({ ...cluster.env, REPORTS_EVENTS: 'true' }, { [`${SA}/token`]: 't', [`${SA}/namespace`]: 'kas' }), COMMANDS);
  t.match(on, { kind: 'run', config: { reports: 'objects', reportsApi: 'wgpolicyk8s', reportsEvents: true, reportsMaxBytes: 65536 } });
  t.match(loadConfig([], cluster, COMMANDS), { kind: 'run', config: { reports: 'off', reportsApi: 'openreports', reportsEvents: false, reportsMaxBytes: 98304 } }, 'off by default');
  const bad = loadConfig(['--reports', 'yes', '--reports-max-bytes', '2Mi'], cluster, COMMANDS);
  t.same(bad.kind === 'invalid' && bad.problems.map((p) => p.split(';')[0]), ['--reports: "yes" is not supported', '--reports-max-bytes: "2Mi" must be from 4Ki to 1Mi']);
  const unregistered = loadConfig(['--reports', 'metrics', '--no-register'], cluster, COMMANDS);
  t.match(unregistered.kind === 'invalid' && unregistered.problems.join('\n'), /--reports metrics needs registration/);
  t.match(loadConfig(['render', '--reports-rbac', '--reports', 'objects'], probe(), COMMANDS), { kind: 'run', command: 'render' }, 'render needs no cluster for it');
});
