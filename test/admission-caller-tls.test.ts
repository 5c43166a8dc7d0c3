// TLS as kube-apiserver does it: only the caBundle is trusted, the name <service>.<namespace>.svc is
// verified, HTTP/1.1 with keep-alive; a wrong CA or name fails with the contract's error text.
import t, { type Test } from 'tap';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { createCertificateAuthority } from '../local-cluster/fake-apiserver/certs.js';
import { createAdmissionCaller } from '../local-cluster/admission-caller/index.js';
import { createPodRequest, pod, register, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { startTestWebhookServer, type TestWebhookServer } from '../local-cluster/fake-apiserver/webhook-server.js';

const api = await startFakeApiServer({ namespaces: ['team-a', 'webhooks'] });
t.teardown(() => api.close());

async function serverWith(t: Test, options: Parameters<typeof startTestWebhookServer>[0]): Promise<TestWebhookServer> {
  const server = await startTestWebhookServer(options);
  t.teardown(() => server.close());
  return server;
}

async function admitAgainst(t: Test, server: TestWebhookServer, overrides: Record<string, unknown>) {
  const caller = createAdmissionCaller({ api, resolveService: () => ({ host: '127.0.0.1', port: server.port }) });
  t.teardown(() => caller.close());
  await register(api, 'validating', 'tls', [webhookEntry('tls.example.com', server.caBundle, overrides)]);
  try {
    return await caller.admit(createPodRequest(pod('web')));
  } finally {
    api.store.delete('validatingwebhookconfigurations', undefined, 'tls');
  }
}

const prefix = 'Internal error occurred: failed calling webhook "tls.example.com": failed to call webhook: Post "https://hook.webhooks.svc:443/admit?timeout=10s": ';

t.test('a caBundle of another CA: certificate signed by unknown authority', async (t) => {
  const server = await serverWith(t, {});
  const otherCa = Buffer.from(createCertificateAuthority('someone-else').certPem).toString('base64');
  const result = await admitAgainst(t, server, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/admit' }, caBundle: otherCa } });
  t.equal(result.allowed === false && result.status.message, `${prefix}tls: failed to verify certificate: x509: certificate signed by unknown authority`);
  t.equal(server.received.length, 0, 'nothing was sent');
});

t.test('no caBundle: the system roots, which do not know the test CA', async (t) => {
  const server = await serverWith(t, {});
  const result = await admitAgainst(t, server, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/admit' } } });
  t.equal(result.allowed === false && result.status.message, `${prefix}tls: failed to verify certificate: x509: certificate signed by unknown authority`);
});

t.test('a certificate for another name: certificate is valid for X, not <svc>.<ns>.svc', async (t) => {
  const server = await serverWith(t, { dnsNames: ['other.webhooks.svc', 'other'] });
  const result = await admitAgainst(t, server, {});
  t.equal(result.allowed === false && result.status.message, `${prefix}tls: failed to verify certificate: x509: certificate is valid for other.webhooks.svc, other, not hook.webhooks.svc`);
});

t.test('only the .cluster.local name is not enough: the apiserver asks for <svc>.<ns>.svc', async (t) => {
  const server = await serverWith(t, { dnsNames: ['hook.webhooks.svc.cluster.local'] });
  const result = await admitAgainst(t, server, {});
  t.equal(result.allowed === false && result.status.message, `${prefix}tls: failed to verify certificate: x509: certificate is valid for hook.webhooks.svc.cluster.local, not hook.webhooks.svc`);
});

t.test('a TLS failure under Ignore lets the request through', async (t) => {
  const server = await serverWith(t, { dnsNames: ['wrong.name'] });
  const result = await admitAgainst(t, server, { failurePolicy: 'Ignore' });
  t.equal(result.allowed, true);
  t.equal(result.auditAnnotations['failed-open.validating.webhook.admission.k8s.io/round_0_index_0'], 'tls.example.com');
});

t.test('the right CA and name: HTTP/1.1 over ALPN, SNI set, one connection kept alive', async (t) => {
  const server = await serverWith(t, {});
  const caller = createAdmissionCaller({ api, resolveService: (namespace, name, port) => {
    t.same([namespace, name, port], ['webhooks', 'hook', 8443], 'the resolver gets the service and its port');
    return { host: '127.0.0.1', port: server.port };
  } });
  t.teardown(() => caller.close());
  await register(api, 'validating', 'tls', [webhookEntry('tls.example.com', server.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', port: 8443, path: '/validate/pods/' }, caBundle: server.caBundle } })]);
  t.teardown(() => api.store.delete('validatingwebhookconfigurations', undefined, 'tls'));
  for (let i = 0; i < 3; i++) t.equal((await caller.admit(createPodRequest(pod('web')))).allowed, true);
  t.equal(server.received.length, 3);
  t.same(new Set(server.received.map((r) => r.connection)).size, 1, 'keep-alive: one connection for all calls');
  t.same(server.received.map((r) => r.alpnProtocol), ['http/1.1', 'http/1.1', 'http/1.1']);
  t.equal(server.received[0]!.servername, 'hook.webhooks.svc');
  t.equal(server.received[0]!.path, '/validate/pods?timeout=10s', 'the trailing slash is dropped (path.Join)');
  t.equal(server.received[0]!.headers.host, 'hook.webhooks.svc:8443');
});

t.test('a url clientConfig connects to the URL host and verifies it', async (t) => {
  const server = await serverWith(t, { dnsNames: ['localhost'] });
  const ok = await admitAgainst(t, server, { clientConfig: { url: `https://localhost:${server.port}/hooks/`, caBundle: server.caBundle } });
  t.equal(ok.allowed, true);
  t.equal(server.received.at(-1)!.path, '/hooks?timeout=10s');
  const byIp = await admitAgainst(t, server, { clientConfig: { url: `https://127.0.0.1:${server.port}/hooks`, caBundle: server.caBundle } });
  t.equal(byIp.allowed, false, 'the certificate has no IP SAN for 127.0.0.1');
  t.match(byIp.allowed === false && byIp.status.message, `Post "https://127.0.0.1:${server.port}/hooks?timeout=10s": `);
});
