import t from 'tap';
import { validateServingMaterial } from '../src/tls/validate.js';
import { servingSans } from '../src/tls/sans.js';
import { DAY_MS, makeCa, makeLeaf } from './support/tls/tls-fixtures.js';

const names = { cert: '/certs/tls.crt', key: '/certs/tls.key', ca: '/certs/ca.crt' };
const hostName = 'hook.ops.svc';
const sans = servingSans({ serviceName: 'hook', namespace: 'ops', local: false, extraSans: [] });
const now = new Date('2026-03-01T00:00:00Z');
const ca = await makeCa(now, 365);
const leaf = await makeLeaf(ca, sans, now, 90);
const options = { hostName, now, names };

t.test('valid material is accepted and described', async (t) => {
  const result = validateServingMaterial({ certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem }, options);
  if (!result.ok) throw new Error(result.problems.join('; '));
  t.equal(result.material.certPem, leaf.certPem);
  t.equal(result.material.caBundlePem, ca.certPem);
  t.equal(result.material.certNotAfter.getTime(), now.getTime() + 90 * DAY_MS);
  t.equal(result.material.caNotAfter.getTime(), now.getTime() + 365 * DAY_MS);
});

t.test('a key that does not match names the key file', async (t) => {
  const other = await makeLeaf(ca, sans, now);
  const result = validateServingMaterial({ certPem: leaf.certPem, keyPem: other.keyPem, caPem: ca.certPem }, options);
  t.same(result, { ok: false, problems: ['/certs/tls.key: does not match the certificate in /certs/tls.crt'] });
});

t.test('expired and not-yet-valid certificates', async (t) => {
  const later = validateServingMaterial({ certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem }, { ...options, now: new Date(now.getTime() + 91 * DAY_MS) });
  t.equal(later.ok, false);
  t.match(!later.ok && later.problems, [/^\/certs\/tls\.crt: expired at 2026-05-30T00:00:00\.000Z$/]);
  const earlier = validateServingMaterial({ certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem }, { ...options, now: new Date(now.getTime() - 2 * 3600_000) });
  t.match(!earlier.ok && earlier.problems, [/^\/certs\/tls\.crt: not valid before 2026-02-28T23:00:00\.000Z/, /^\/certs\/ca\.crt: the CA that signed \/certs\/tls\.crt: not valid before/]);
});

t.test('SANs that do not cover <svc>.<ns>.svc', async (t) => {
  const wrong = await makeLeaf(ca, { dnsNames: ['other.ops.svc'], ipAddresses: [] }, now);
  const result = validateServingMaterial({ certPem: wrong.certPem, keyPem: wrong.keyPem, caPem: ca.certPem }, options);
  t.same(result, { ok: false, problems: ['/certs/tls.crt: subjectAltName does not cover hook.ops.svc (it has: DNS:other.ops.svc)'] });
});

t.test('a chain that does not verify against ca.crt', async (t) => {
  const otherCa = await makeCa(now);
  const result = validateServingMaterial({ certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: otherCa.certPem }, options);
  t.same(result, { ok: false, problems: ['/certs/tls.crt: does not chain to a CA in /certs/ca.crt (issuer: CN=test CA)'] });
  const bundle = validateServingMaterial({ certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: otherCa.certPem + ca.certPem }, options);
  t.ok(bundle.ok, 'a bundle holding the issuer among others verifies');
});

t.test('missing, garbage and non-PEM files: every problem at once, no key bytes quoted', async (t) => {
  const result = validateServingMaterial({ certPem: 'hello', keyPem: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n', caPem: undefined }, options);
  t.same(result, {
    ok: false,
    problems: ['/certs/tls.crt: no PEM certificate found', '/certs/tls.key: not a valid unencrypted PEM private key', '/certs/ca.crt: missing or unreadable'],
  });
  const broken = validateServingMaterial(
    { certPem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', keyPem: leaf.keyPem, caPem: ca.certPem },
    options,
  );
  t.match(!broken.ok && broken.problems, [/^\/certs\/tls\.crt: not a valid certificate/]);
});
