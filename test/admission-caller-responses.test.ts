// The admission caller checks every response rule of local-cluster/CONTRACT.md section 2 and builds the request of section 1.
import t from 'tap';
import { createPodRequest, pod, register, startCallerRig, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import {
  allow,
  deny,
  jsonPatchResponse,
  type ReceivedReview,
  type Responder,
} from '../local-cluster/fake-apiserver/webhook-server.js';

const { api, hook, caller } = await startCallerRig(t);

/** Registers one webhook of `type` that answers with `respond`, runs a pod CREATE, cleans up. */
async function admitWith(type: 'mutating' | 'validating', respond: Responder, overrides: Record<string, unknown> = {}, request = createPodRequest(pod('web'))) {
  hook.respond = respond;
  const name = `cfg-${type}`;
  await register(api, type, name, [webhookEntry('pods.policy.example.com', hook.caBundle, overrides)]);
  try {
    return await caller.admit(request);
  } finally {
    api.store.delete(`${type}webhookconfigurations`, undefined, name);
  }
}

function callError(result: Awaited<ReturnType<typeof caller.admit>>, inner: string) {
  const message = `failed calling webhook "pods.policy.example.com": ${inner}`;
  return {
    allowed: false,
    status: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Internal error occurred: ${message}`,
      reason: 'InternalError',
      details: { causes: [{ message }] },
      code: 500,
    },
    warnings: result.warnings,
    auditAnnotations: result.auditAnnotations,
  };
}

t.test('the request is an AdmissionReview v1 as section 1 describes', async (t) => {
  const result = await admitWith('validating', allow);
  t.equal(result.allowed, true);
  const received = hook.received.at(-1)!;
  t.equal(received.path, '/admit?timeout=10s', 'timeoutSeconds default 10 becomes ?timeout=10s');
  t.equal(received.headers['content-type'], 'application/json');
  t.equal(received.headers.accept, 'application/json, */*');
  t.equal(received.headers['user-agent'], 'kube-apiserver-admission');
  t.equal(received.headers.authorization, undefined, 'anonymous');
  t.equal(received.httpVersion, '1.1');
  t.equal(received.alpnProtocol, 'http/1.1', 'ALPN offers only http/1.1 although the server offers h2');
  t.equal(received.servername, 'hook.webhooks.svc');
  const request = received.review.request!;
  t.equal(received.review.apiVersion, 'admission.k8s.io/v1');
  t.equal(received.review.kind, 'AdmissionReview');
  t.notOk('response' in received.review);
  t.match(request.uid, /^[0-9a-f-]{36}$/);
  t.same(Object.keys(request), ['uid', 'kind', 'resource', 'requestKind', 'requestResource', 'name', 'namespace', 'operation', 'userInfo', 'object', 'oldObject', 'dryRun', 'options'], 'Go field order, empty subResource omitted');
  t.equal(request.oldObject, null, 'oldObject is null on CREATE');
  t.equal(request.dryRun, false);
  t.same(request.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' });
  t.same(request.userInfo, { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
  t.equal(request.namespace, 'team-a');
  const object = request.object as { metadata: Record<string, unknown> };
  t.ok(object.metadata.uid, 'validating webhooks see the uid the store filled in');
  t.ok(object.metadata.creationTimestamp);

  await admitWith('validating', allow);
  t.not(hook.received.at(-1)!.review.request!.uid, request.uid, 'a fresh uid per call');
});

t.test('mutating webhooks on CREATE see no uid and a null creationTimestamp', async (t) => {
  await admitWith('mutating', allow);
  const object = hook.received.at(-1)!.review.request!.object as { metadata: Record<string, unknown> };
  t.equal(object.metadata.uid, undefined);
  t.equal(object.metadata.creationTimestamp, null);
});

t.test('DELETE sends object null and the old object', async (t) => {
  const old = pod('web');
  const result = await admitWith('validating', allow, {}, { ...createPodRequest(old), operation: 'DELETE', object: undefined, oldObject: old });
  t.equal(result.allowed, true);
  const request = hook.received.at(-1)!.review.request!;
  t.equal(request.object, null);
  t.same(request.oldObject, old);
  t.same(request.options, { kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1' });
});

t.test('denials: message, reason, none, code raised to 400', async (t) => {
  const withMessage = await admitWith('validating', (r) => deny(r, { message: 'image must be pinned', code: 403 }));
  t.same(withMessage, {
    allowed: false,
    status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'admission webhook "pods.policy.example.com" denied the request: image must be pinned', code: 403 },
    warnings: [],
    auditAnnotations: {},
  });
  const withReason = await admitWith('validating', (r) => deny(r, { reason: 'NotPinned', code: 200 }));
  t.equal(withReason.allowed === false && withReason.status.message, 'admission webhook "pods.policy.example.com" denied the request: NotPinned');
  t.equal(withReason.allowed === false && withReason.status.code, 400, 'a code below 400 becomes 400');
  const bare = await admitWith('validating', (r) => deny(r, undefined));
  t.equal(bare.allowed === false && bare.status.message, 'admission webhook "pods.policy.example.com" denied the request without explanation');
  t.equal(bare.allowed === false && bare.status.status, 'Failure');
  const missingAllowed = await admitWith('validating', (r) => ({ body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: r.review.request?.uid } } }));
  t.equal(missingAllowed.allowed, false, 'a missing allowed decodes as false');
  const successStatus = await admitWith('validating', (r) => deny(r, { status: 'Success', message: 'no' }));
  t.equal(successStatus.allowed === false && successStatus.status.status, 'Failure');
  const ignored = await admitWith('validating', (r) => deny(r, { message: 'no' }), { failurePolicy: 'Ignore' });
  t.equal(ignored.allowed, false, 'a denial is final even under Ignore');
});

t.test('invalid responses are call errors with the contract texts', async (t) => {
  const cases: [string, Responder, string, 'mutating' | 'validating'][] = [
    ['absent', () => ({ body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' } }), 'received invalid webhook response: webhook response was absent', 'validating'],
    ['wrong uid', () => ({ body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'nope', allowed: true } } }), 'received invalid webhook response: expected response.uid="UID", got "nope"', 'validating'],
    ['empty uid', () => ({ body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { allowed: true } } }), 'received invalid webhook response: expected response.uid="UID", got ""', 'validating'],
    ['wrong apiVersion', (r) => ({ body: { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: { uid: r.review.request?.uid, allowed: true } } }), 'received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview', 'validating'],
    ['no TypeMeta', (r) => ({ body: { response: { uid: r.review.request?.uid, allowed: true } } }), 'received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=', 'validating'],
    ['patch without patchType', (r) => allow(r, { patch: Buffer.from('[]').toString('base64') }), 'received invalid webhook response: webhook returned response.patch but not response.patchType', 'mutating'],
    ['patchType without patch', (r) => allow(r, { patchType: 'JSONPatch' }), 'received invalid webhook response: webhook returned response.patchType but not response.patch', 'mutating'],
    ['empty patchType', (r) => allow(r, { patchType: '', patch: Buffer.from('[]').toString('base64') }), 'received invalid webhook response: webhook returned invalid response.patchType of ""', 'mutating'],
    ['patch from a validating webhook', (r) => jsonPatchResponse(r, []), 'received invalid webhook response: validating webhook may not return response.patch/patchType', 'validating'],
    ['patchType from a validating webhook', (r) => allow(r, { patchType: 'JSONPatch' }), 'received invalid webhook response: validating webhook may not return response.patch/patchType', 'validating'],
    ['undecodable patch', (r) => allow(r, { patchType: 'JSONPatch', patch: Buffer.from('{"op":1}').toString('base64') }), 'received undecodable patch in webhook response', 'mutating'],
    ['bad base64', (r) => allow(r, { patchType: 'JSONPatch', patch: 'W10' }), 'failed to call webhook: illegal base64 data at input byte 0', 'mutating'],
    ['500 with a Status', () => ({ status: 500, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'boom', code: 500 } }), 'failed to call webhook: boom', 'validating'],
    ['500 with text', () => ({ status: 500, headers: { 'Content-Type': 'text/plain' }, body: 'crashed' }), 'failed to call webhook: an error on the server ("crashed") has prevented the request from succeeding', 'validating'],
    ['503 without Retry-After', () => ({ status: 503, body: '{}' }), 'failed to call webhook: the server is currently unable to handle the request', 'validating'],
    ['0-length 200', () => ({ body: '' }), 'failed to call webhook: 0-length response with status code: 200 and content type: application/json', 'validating'],
    ['not JSON', () => ({ body: '{"response": ' }), 'failed to call webhook: couldn\'t get version/kind; json parse error: ', 'validating'],
  ];
  for (const [label, respond, inner, type] of cases) {
    const result = await admitWith(type, respond);
    const uid = hook.received.at(-1)!.review.request!.uid;
    const expected = inner.replace('"UID"', `"${uid}"`);
    if (expected.endsWith(': ')) {
      t.equal(result.allowed, false, label);
      t.match(result.allowed === false && result.status.message, `Internal error occurred: failed calling webhook "pods.policy.example.com": ${expected}`, label);
      t.equal(result.allowed === false && result.status.code, 500, label);
    } else {
      t.same(result, callError(result, expected), label);
    }
  }
});

t.test('a 403 AdmissionReview body is still a call error (deny needs 200)', async (t) => {
  const result = await admitWith('validating', (r) => ({ status: 403, body: deny(r, { message: 'no' }) }));
  // client-go keeps the server's text for 403, and a JSON body that is not a Status has none.
  t.equal(result.allowed === false && result.status.message, 'Internal error occurred: failed calling webhook "pods.policy.example.com": failed to call webhook: ');
  t.equal(result.allowed === false && result.status.code, 500);
});

t.test('patches are applied; no-op patches change nothing', async (t) => {
  const result = await admitWith('mutating', (r) => jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/injected', value: 'yes' }]));
  t.equal(result.allowed, true);
  t.same(result.allowed && result.object?.metadata?.labels, { injected: 'yes' });
  t.equal(result.auditAnnotations['mutation.webhook.admission.k8s.io/round_0_index_0'], '{"configuration":"cfg-mutating","webhook":"pods.policy.example.com","mutated":true}');
  const noop = await admitWith('mutating', (r) => jsonPatchResponse(r, []));
  t.same(noop.allowed && noop.object?.metadata?.labels, {});
  t.equal(noop.auditAnnotations['mutation.webhook.admission.k8s.io/round_0_index_0'], '{"configuration":"cfg-mutating","webhook":"pods.policy.example.com","mutated":false}');
});

t.test('patch failures and DELETE patches are 500 whatever the failurePolicy', async (t) => {
  const broken = await admitWith('mutating', (r) => jsonPatchResponse(r, [{ op: 'replace', path: '/metadata/nothing/here', value: 1 }]), { failurePolicy: 'Ignore' });
  t.equal(broken.allowed, false);
  t.equal(broken.allowed === false && broken.status.code, 500);
  t.equal(broken.allowed === false && broken.status.reason, 'InternalError');
  const old = pod('web');
  const onDelete = await admitWith('mutating', (r) => jsonPatchResponse(r, [{ op: 'add', path: '/metadata/labels/x', value: 'y' }]), { failurePolicy: 'Ignore' }, { ...createPodRequest(old), operation: 'DELETE', object: undefined, oldObject: old });
  t.equal(onDelete.allowed === false && onDelete.status.message, 'Internal error occurred: admission webhook "pods.policy.example.com" attempted to modify the object, which is not supported for this operation');
  t.equal(onDelete.allowed === false && onDelete.status.code, 500);
});

t.test('warnings are deduplicated and audit annotations prefixed', async (t) => {
  const result = await admitWith('validating', (r) => allow(r, { warnings: ['pin your images', 'pin your images', 'second'], auditAnnotations: { decision: 'ok', 'Bad Key!': 'x' } }));
  t.same(result.warnings, ['pin your images', 'second']);
  t.same(result.auditAnnotations, { 'pods.policy.example.com/decision': 'ok' }, 'invalid keys are dropped');
  const denied = await admitWith('validating', (r) => deny(r, { message: 'no' }, { warnings: ['also on denial'] }));
  t.same(denied.warnings, ['also on denial']);
  // k8s.io/apimachinery's NewWarningHeader refuses these texts; kube-apiserver's recorder drops them without a word.
  const unsendable = await admitWith('validating', (r) => allow(r, { warnings: ['', 'two\nlines', 'a\ttab', 'half \ud800 pair', 'kept \u00e9 \ud83d\ude00'] }));
  t.same(unsendable.warnings, ['kept \u00e9 \ud83d\ude00'], 'empty, control characters and invalid UTF-8 are dropped');
});

t.test('429/5xx with a numeric Retry-After are retried', async (t) => {
  let attempts = 0;
  const result = await admitWith('validating', (r: ReceivedReview) => {
    attempts += 1;
    return attempts === 1 ? { status: 503, headers: { 'Retry-After': '0' }, body: '{}' } : allow(r);
  });
  t.equal(result.allowed, true);
  t.equal(attempts, 2);
});

t.test('v1beta1 reviews: no uid/kind checks, patch without patchType is a JSONPatch, validating patch dropped', async (t) => {
  const mutated = await admitWith(
    'mutating',
    () => ({ body: { response: { allowed: true, patch: Buffer.from('[{"op":"add","path":"/metadata/labels/b","value":"1"}]').toString('base64') } } }),
    { admissionReviewVersions: ['v1beta1'] },
  );
  t.equal(hook.received.at(-1)!.review.apiVersion, 'admission.k8s.io/v1beta1');
  t.same(mutated.allowed && mutated.object?.metadata?.labels, { b: '1' });
  const validated = await admitWith('validating', () => ({ body: { response: { allowed: true, patch: 'W10=', patchType: 'JSONPatch' } } }), { admissionReviewVersions: ['v1beta1', 'v1'] });
  t.equal(validated.allowed, true);
});
