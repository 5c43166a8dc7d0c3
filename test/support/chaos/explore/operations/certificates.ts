/**
 * Certificate operations. Generate mode: the CA started over as docs/operations.md says (delete
 * the Secret, restart). Files mode (cert-manager): `cmctl renew` of the serving certificate (a new
 * key, the same CA), and a new CA key (the CA's Secret deleted, so cert-manager makes a new CA;
 * then the serving certificate renewed under it: ca.crt in the mounted Secret changes at once).
 */
import { GENERATED_SECRET, NS } from '../world.js';
import type { OperationContext } from './context.js';
import { rolloutRestart } from './workload.js';

const CERTIFICATES = 'certificates.cert-manager.io';
const SERVING = { certificate: 'kube-admission-server-serving-cert', secret: 'kube-admission-server-serving-cert' };
const CA = { certificate: 'kube-admission-server-ca', secret: 'kube-admission-server-ca' };

const secretData = (ctx: OperationContext, name: string, key: string): string =>
  String(((ctx.world.store.get('secrets', NS, name)?.['data'] ?? {}) as Record<string, string>)[key] ?? '');

export async function caStartOver(ctx: OperationContext): Promise<string> {
  await ctx.world.admin.delete({ resource: 'secrets', namespace: NS, name: GENERATED_SECRET });
  const restarted = await rolloutRestart(ctx);
  return `Secret ${GENERATED_SECRET} deleted, then ${restarted}`;
}

/** What `cmctl renew` does: the Issuing condition on the Certificate; cert-manager issues at once. */
async function renew(ctx: OperationContext, certificate: string, secret: string): Promise<void> {
  const before = secretData(ctx, secret, 'tls.crt');
  const issuing = { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'Certificate re-issuance manually triggered', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
  const current = ctx.world.store.get(CERTIFICATES, NS, certificate);
  const conditions = ((current?.['status'] as { conditions?: unknown[] } | undefined)?.conditions ?? []).filter((c) => (c as { type?: string }).type !== 'Issuing');
  await ctx.world.admin.mergePatch({ resource: CERTIFICATES, namespace: NS, name: certificate }, { status: { conditions: [...conditions, issuing] } }, 'status');
  await ctx.world.until(`cert-manager reissued ${certificate}`, () => secretData(ctx, secret, 'tls.crt') !== before, ctx.sizes.waitMs);
}

export async function reissueServingCertificate(ctx: OperationContext): Promise<string> {
  await renew(ctx, SERVING.certificate, SERVING.secret);
  return `cmctl renew ${SERVING.certificate}: a new key and leaf from the same CA`;
}

export async function newCaKey(ctx: OperationContext): Promise<string> {
  const before = secretData(ctx, CA.secret, 'tls.crt');
  await ctx.world.admin.delete({ resource: 'secrets', namespace: NS, name: CA.secret });
  await ctx.world.until('cert-manager made a new CA', () => !['', before].includes(secretData(ctx, CA.secret, 'tls.crt')), ctx.sizes.waitMs);
  await renew(ctx, SERVING.certificate, SERVING.secret);
  const caNow = secretData(ctx, CA.secret, 'tls.crt');
  const moved = secretData(ctx, SERVING.secret, 'ca.crt') === caNow;
  return `CA Secret deleted: a new CA with a new key; the serving certificate renewed under it (ca.crt ${moved ? 'is the new CA only' : 'NOT the new CA'})`;
}
