// Whose a live configuration of this install's name is: this install's only when each of its
// webhooks calls this install (its Service; in the dev loop the host it is reachable at).
import t from 'tap';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import { heldElsewhere } from '../src/registration/configuration-holder.js';

const SERVICE = { service: { name: 'kas', namespace: 'ops' } };
const DEV = { urlBase: 'https://host.docker.internal:8443' };
const LABELS = { 'app.kubernetes.io/managed-by': 'kube-admission-server' };
const configuration = (clientConfigs: Record<string, unknown>[], labels?: Record<string, string>): WebhookConfiguration =>
  ({ metadata: { name: 'kas', ...(labels ? { labels } : {}) }, webhooks: clientConfigs.map((clientConfig, i) => ({ name: `w${i}.kas.ops.svc`, clientConfig })) }) as unknown as WebhookConfiguration;

const CASES: { name: string; live: WebhookConfiguration; target: typeof SERVICE | typeof DEV; held: RegExp | undefined }[] = [
  { name: 'every webhook calls this Service', live: configuration([{ service: { name: 'kas', namespace: 'ops', path: '/validate/a' } }, { service: { name: 'kas', namespace: 'ops', path: '/validate/b' } }]), target: SERVICE, held: undefined },
  { name: 'one webhook calls the same Service name in another namespace', live: configuration([{ service: { name: 'kas', namespace: 'ops' } }, { service: { name: 'kas', namespace: 'other' } }]), target: SERVICE, held: /^its webhook w1\.kas\.ops\.svc calls service other\/kas$/ },
  { name: 'another Service in this namespace', live: configuration([{ service: { name: 'gatekeeper', namespace: 'ops' } }]), target: SERVICE, held: /calls service ops\/gatekeeper/ },
  { name: 'a URL where a Service is expected', live: configuration([{ url: 'https://10.0.0.5/validate' }]), target: SERVICE, held: /calls https:\/\/10\.0\.0\.5\/validate/ },
  { name: 'no webhook, labelled by this server', live: configuration([], LABELS), target: SERVICE, held: undefined },
  { name: 'no webhook and no label (another tool\'s, a hand-made one)', live: configuration([]), target: SERVICE, held: /no webhook and no app\.kubernetes\.io\/managed-by=kube-admission-server label/ },
  { name: 'the dev loop: its host on another port (an earlier run)', live: configuration([{ url: 'https://host.docker.internal:9443/validate/a' }]), target: DEV, held: undefined },
  { name: 'the dev loop: another host', live: configuration([{ url: 'https://other.example:8443/validate/a' }]), target: DEV, held: /calls https:\/\/other\.example:8443\/validate\/a/ },
  { name: 'the dev loop: a Service', live: configuration([{ service: { name: 'kas', namespace: 'ops' } }]), target: DEV, held: /calls service ops\/kas/ },
];

for (const { name, live, target, held } of CASES) {
  t.test(name, async (t) => {
    const why = heldElsewhere(live, target);
    if (held === undefined) t.equal(why, undefined, "this install's");
    else t.match(why, held);
  });
}
