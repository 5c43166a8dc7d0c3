// The double's managedFields and clock, as kube-apiserver keeps them (apimachinery's
// managedfields/internal/managedfieldsupdater.go): one entry per manager and operation, whose time
// a write moves only when it changed the object; times, creationTimestamp and every answer's Date
// header from the control plane's clock, which a test may set off this machine's.
import t from 'tap';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';

const api = await startFakeApiServer();
t.teardown(() => api.close());

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const HOUR_MS = 3_600_000;
type Entry = { manager: string; operation: string; time: string };
type Stored = { metadata: { resourceVersion: string; creationTimestamp: string; managedFields: Entry[] }; webhooks: Record<string, unknown>[] };

const hook = (timeoutSeconds: number) => ({
  name: 'a.b.c',
  clientConfig: { service: { name: 'hook', namespace: 'webhooks' }, caBundle: Buffer.from('bundle').toString('base64') },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  timeoutSeconds,
});
const entries = (object: Stored) => object.metadata.managedFields.map((e) => `${e.manager}/${e.operation}@${e.time}`);
/** Whether `time` (whole seconds) was stamped by the clock whose Date header said `date`: the head is written just after. */
const stampedBy = (time: string | undefined, date: number): boolean => time !== undefined && Date.parse(time) <= date && date - Date.parse(time) <= 1000;

async function write(method: 'POST' | 'PUT', manager: string, body: Record<string, unknown>): Promise<{ object: Stored; date: number }> {
  const reply = await rawRequest(api, method, method === 'POST' ? `${VWC}?fieldManager=${manager}` : `${VWC}/demo?fieldManager=${manager}`, { body });
  if (reply.status >= 300) throw new Error(reply.text);
  return { object: reply.json as Stored, date: Date.parse(String(reply.headers.date)) };
}

t.test('one entry per manager; a write moves its time only when it changed the object', async (t) => {
  const created = await write('POST', 'alice', { metadata: { name: 'demo' }, webhooks: [hook(5)] });
  const t0 = created.object.metadata.managedFields[0]!.time;
  t.same(entries(created.object), [`alice/Update@${t0}`], 'the creator, at the creation');
  t.ok(stampedBy(t0, created.date), `the time (${t0}) is the answering kube-apiserver's, in whole seconds (its Date header: ${new Date(created.date).toISOString()})`);

  api.store.clock.shift(HOUR_MS); // an hour passes on the control plane, none here
  t.teardown(() => api.store.clock.shift(-api.store.clock.offsetMs));
  const same = await write('PUT', 'bob', created.object);
  t.same(entries(same.object), [`alice/Update@${t0}`], 'a write that changes nothing leaves every entry as it was');

  const changed = await write('PUT', 'bob', { ...same.object, webhooks: [hook(7)] });
  const t1 = changed.object.metadata.managedFields[1]?.time ?? '';
  t.same(entries(changed.object), [`alice/Update@${t0}`, `bob/Update@${t1}`], "a change adds the writer's entry, sorted by time");
  t.ok(stampedBy(t1, changed.date) && Date.parse(t1) - Date.parse(t0) >= HOUR_MS, `at the control plane's now, an hour on (${t1})`);

  api.store.clock.shift(HOUR_MS);
  const again = await write('PUT', 'alice', { ...changed.object, webhooks: [hook(9)] });
  const t2 = again.object.metadata.managedFields[1]?.time ?? '';
  t.same(entries(again.object), [`bob/Update@${t1}`, `alice/Update@${t2}`], "alice's one entry moved to her latest change");
  t.ok(stampedBy(t2, again.date), `at the control plane's now (${t2})`);

  const edited = api.store.update('validatingwebhookconfigurations', { ...api.store.get('validatingwebhookconfigurations', undefined, 'demo')!, webhooks: [hook(11)] }) as unknown as Stored;
  t.equal(edited.metadata.managedFields.at(-1)?.manager, 'unknown', 'a change written without a manager still counts, as an unnamed one');
  await rawRequest(api, 'DELETE', `${VWC}/demo`);
});

t.test("a control plane whose clock is behind this machine's: creationTimestamp, managedFields and Date all on its clock", async (t) => {
  api.store.clock.shift(-HOUR_MS);
  t.teardown(() => api.store.clock.shift(-api.store.clock.offsetMs));
  const before = Date.now();
  const { object, date } = await write('POST', 'alice', { metadata: { name: 'demo' }, webhooks: [hook(5)] });
  t.ok(date <= before - HOUR_MS + 2000 && date >= before - HOUR_MS - 1000, `the Date header is an hour behind this machine's clock (${new Date(date).toISOString()})`);
  t.ok(stampedBy(object.metadata.creationTimestamp, date), `creationTimestamp ${object.metadata.creationTimestamp}`);
  t.ok(stampedBy(object.metadata.managedFields[0]?.time, date), `managedFields time ${object.metadata.managedFields[0]?.time}`);
  await rawRequest(api, 'DELETE', `${VWC}/demo`);
});
