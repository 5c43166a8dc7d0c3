// The server's API client keeps its TLS connections alive and shares them across calls
// (src/kube/shared-agents.ts), as client-go does, where client-node 1.4 alone opens a new one per
// call. The double numbers the connections it accepts (RequestRecord.connection), so the count is
// read on the server side, over real TLS, through three kube-apiservers behind one address.
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import type { RequestRecord } from '../local-cluster/fake-apiserver/request-log.js';
import { repositoryRoot } from '../local-cluster/util/repository-root.js';
import { unhookedNode } from '../local-cluster/util/unhooked-node.js';
import { createKubeApi, loadKubeConfig, type KubeApi } from '../src/kube/client.js';
import { getJson } from '../src/kube/paged-list.js';
import { callApi } from '../src/kube/request-deadline.js';
import type { SharedAgentKubeConfig } from '../src/kube/shared-agents.js';
import { EVENT_MS, EXIT_MS, within } from './support/deadline.js';
import { cleanEnvironment, runCommand } from './support/tools/run-command.js';

const NAMESPACE = 'kube-admission-server';

async function cluster(t: Test): Promise<{ api: FakeApiServer; kubeconfig: string }> {
  const api = await startFakeApiServer({ apiservers: 3, namespaces: [NAMESPACE] });
  t.teardown(() => api.close());
  const dir = await mkdtemp(join(tmpdir(), 'kas-shared-connections-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
  return { api, kubeconfig };
}

function client(t: Test, kubeconfig: string): { kubeConfig: SharedAgentKubeConfig; kube: KubeApi } {
  const kubeConfig = loadKubeConfig({ kubeconfig, inCluster: false });
  t.teardown(() => kubeConfig.close());
  return { kubeConfig, kube: createKubeApi(kubeConfig) };
}

/** The calls of a start, one after another, each through callApi as the server makes them. */
async function sequentialCalls(kube: KubeApi, kubeConfig: KubeConfig, signal: AbortSignal): Promise<void> {
  await callApi(signal, (options) => kube.version.getCode(options));
  await callApi(signal, (options) => kube.core.readNamespacedSecret({ name: 'absent', namespace: NAMESPACE }, options)).catch(() => undefined);
  await callApi(signal, (options) => kube.coordination.listNamespacedLease({ namespace: NAMESPACE }, options));
  await callApi(signal, (options) => kube.admission.listValidatingWebhookConfiguration({}, options));
  await callApi(signal, (options) => kube.rbac.listClusterRole({}, options));
  // The raw GET of paged lists and discovery goes through applyToHTTPSOptions, not the typed APIs.
  await getJson(kubeConfig, '/api/v1/namespaces', EVENT_MS, signal);
}

const since = (api: FakeApiServer, from: number): RequestRecord[] => api.requests.slice(from).filter((r) => r.connection !== undefined);

t.test('sequential calls of one process share one kept-alive TLS connection, on one kube-apiserver', async (t) => {
  const { api, kubeconfig } = await cluster(t);
  const { kubeConfig, kube } = client(t, kubeconfig);
  const from = api.requests.length;
  await sequentialCalls(kube, kubeConfig, AbortSignal.timeout(EVENT_MS));
  const records = since(api, from);
  t.equal(records.length, 6, 'every call reached the double');
  t.equal(new Set(records.map((r) => r.connection)).size, 1, `one connection for six calls (saw ${records.map((r) => r.connection).join(', ')})`);
  t.equal(new Set(records.map((r) => r.apiserver)).size, 1, 'so one kube-apiserver served them, as behind an L4 load balancer');
  t.equal(kubeConfig.agentCount, 1, 'typed calls and raw GETs share one agent (one TLS configuration)');
  t.equal(kubeConfig.idleConnections, 1, 'the connection waits in the pool');

  // What the same calls cost with client-node's own agent per call: the double does tell
  // connections apart, so the assertion above can fail.
  const plain = new KubeConfig();
  plain.loadFromFile(kubeconfig);
  const plainFrom = api.requests.length;
  await sequentialCalls(createKubeApi(plain), plain, AbortSignal.timeout(EVENT_MS));
  t.equal(new Set(since(api, plainFrom).map((r) => r.connection)).size, 6, "client-node's own agents: a connection per call");
});

t.test('close() ends the kept-alive connections; a call after it still works', async (t) => {
  const { api, kubeconfig } = await cluster(t);
  const { kubeConfig, kube } = client(t, kubeconfig);
  await callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.version.getCode(options));
  t.equal(api.openConnections, 1, 'one connection open at the double');
  kubeConfig.close();
  t.equal(kubeConfig.idleConnections, 0);
  await within(EVENT_MS, 'the double to see the connection closed', (async () => {
    while (api.openConnections > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  })());
  const from = api.requests.length;
  await callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.version.getCode(options));
  t.equal(since(api, from).length, 1, 'a late call (a shutdown step that outlives close) is still answered');
  t.equal(kubeConfig.agentCount, 0, 'on a per-call agent, nothing kept');
});

t.test('a deadline still cuts a call on a kept-alive connection, and the next call gets a fresh one', async (t) => {
  const { api, kubeconfig } = await cluster(t);
  const { kube } = client(t, kubeconfig);
  const from = api.requests.length;
  await callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.version.getCode(options));
  api.faults.add({ resource: 'leases', verb: 'get' }, { hang: true }, { times: 1 });
  const hung = callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.coordination.readNamespacedLease({ name: 'held', namespace: NAMESPACE }, options), 200);
  await t.rejects(within(EVENT_MS, 'the call to end at its deadline', hung), 'the deadline ends a call on a reused connection');
  await callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.coordination.listNamespacedLease({ namespace: NAMESPACE }, options));
  const [first, cut, next] = since(api, from);
  t.equal(cut?.connection, first?.connection, 'the hung call reused the first connection');
  t.not(next?.connection, cut?.connection, 'the aborted connection is not reused');
});

t.test('a watch runs on the shared agent alongside calls', async (t) => {
  const { api, kubeconfig } = await cluster(t);
  const { kubeConfig, kube } = client(t, kubeconfig);
  const seen: string[] = [];
  let ended = false;
  const controller = await new Watch(kubeConfig).watch(
    '/api/v1/namespaces',
    {},
    (type, object: { metadata?: { name?: string } }) => seen.push(`${type} ${object.metadata?.name}`),
    () => (ended = true),
  );
  t.teardown(() => controller.abort());
  await callApi(AbortSignal.timeout(EVENT_MS), (options) => kube.core.createNamespace({ body: { metadata: { name: 'watched' } } }, options));
  await within(EVENT_MS, 'the watch to see the namespace', (async () => {
    while (!seen.includes('ADDED watched')) await new Promise((resolve) => setTimeout(resolve, 20));
  })());
  const watch = api.requests.find((r) => r.verb === 'watch');
  const create = api.requests.find((r) => r.verb === 'create');
  t.not(create?.connection, watch?.connection, 'a call while the watch is open gets a connection of its own');
  t.equal(kubeConfig.agentCount, 1, 'both on the one shared agent');
  t.notOk(ended, 'the watch is still open');
});

t.test('an idle kept-alive connection does not keep the process alive', async (t) => {
  const { api, kubeconfig } = await cluster(t);
  // The compiled client (as the server ships), in a process of its own that makes two calls,
  // reports what keeps its event loop alive while the connection is idle in the pool, and returns
  // without closing anything: it must exit by itself.
  const clientUrl = pathToFileURL(join(repositoryRoot(), 'dist', 'src', 'kube', 'client.js')).href;
  const script = `
    const { createKubeApi, loadKubeConfig } = await import(${JSON.stringify(clientUrl)});
    const kubeConfig = loadKubeConfig({ kubeconfig: process.env.KAS_TEST_KUBECONFIG, inCluster: false });
    const kube = createKubeApi(kubeConfig);
    await kube.version.getCode();
    await kube.core.readNamespace({ name: 'default' });
    await new Promise((resolve) => setImmediate(resolve));
    console.log(JSON.stringify({ idle: kubeConfig.idleConnections, holding: process.getActiveResourcesInfo() }));
  `;
  const node = unhookedNode(['--input-type=module', '-e', script]);
  const result = await runCommand(node.command, node.args, { env: cleanEnvironment({ KAS_TEST_KUBECONFIG: kubeconfig }), timeoutMs: EXIT_MS });
  t.equal(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout.trim()) as { idle: number; holding: string[] };
  t.equal(report.idle, 1, 'the connection was kept, idle');
  t.notOk(report.holding.some((kind) => /TLSWrap|TCPSocketWrap/.test(kind)), `no socket holds the event loop (${report.holding.join(', ')})`);
  t.equal(new Set(api.requests.map((r) => r.connection)).size, 1, 'both calls on one connection');
});
