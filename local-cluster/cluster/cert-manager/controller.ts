/**
 * A stand-in for cert-manager's controllers, enough for the cert-manager overlay: Issuers and
 * ClusterIssuers of kind selfSigned or ca become Ready (a ca Issuer once its Secret holds a key
 * pair), and each Certificate gets its Secret (type kubernetes.io/tls: tls.crt, tls.key, ca.crt,
 * cert-manager's annotations) when the Secret is missing, does not match the spec, or is due for
 * renewal, or when `cmctl renew` set the Issuing condition; the Certificate's status then reads
 * Ready (the Issuing condition gone) with notBefore, notAfter and renewalTime.
 * Not done: CertificateRequests, ACME and other issuer kinds, private key rotation policies
 * beyond issuing a new key each time.
 */
import { X509Certificate } from 'node:crypto';
import type { KubeObject, ObjectStore, StoreEvent } from '../../fake-apiserver/index.js';
import { kubeTime } from '../../fake-apiserver/objects.js';
import { isNotFound, type ClusterClient } from '../api-client.js';
import { WorkQueue, type SyncResult } from '../work-queue.js';
import { rec } from '../workload-objects.js';
import { issue, parseGoDuration, type Signer } from './issuing.js';

type Json = Record<string, unknown>;

const CERTIFICATES = 'certificates.cert-manager.io';
const ISSUERS = 'issuers.cert-manager.io';
const CLUSTER_ISSUERS = 'clusterissuers.cert-manager.io';
/** Where ClusterIssuers of kind ca find their Secret (cert-manager's --cluster-resource-namespace). */
export const CLUSTER_RESOURCE_NAMESPACE = 'cert-manager';
const WATCHED = new Set([CERTIFICATES, ISSUERS, CLUSTER_ISSUERS, 'secrets']);

type IssuerState = { ready: true; signer: Signer | undefined } | { ready: false; message: string };

const pem = (secret: KubeObject, key: string): string => Buffer.from(String(rec(secret.data)[key] ?? ''), 'base64').toString('utf8');

function readyCondition(status: boolean, reason: string, message: string, generation: unknown): Json {
  return { type: 'Ready', status: status ? 'True' : 'False', reason, message, lastTransitionTime: kubeTime(), observedGeneration: generation };
}

/** `cmctl renew` (or cert-manager itself) set the Issuing condition: issue now, due or not. */
function issuingRequested(certificate: KubeObject): boolean {
  const conditions = Array.isArray(rec(certificate.status).conditions) ? (rec(certificate.status).conditions as Json[]) : [];
  return conditions.some((c) => c.type === 'Issuing' && c.status === 'True');
}

export class CertManagerStandIn {
  readonly #queue: WorkQueue;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly client: ClusterClient,
    onError: (message: string) => void,
  ) {
    this.#queue = new WorkQueue('cert-manager', (namespace) => this.sync(namespace), onError);
  }

  start(): void {
    this.#unsubscribe = this.store.subscribe((event: StoreEvent) => {
      if (!WATCHED.has(event.resource)) return;
      if (event.resource === CLUSTER_ISSUERS) for (const ns of this.store.list('namespaces')) this.#queue.add(ns.metadata?.name ?? '');
      else this.#queue.add(event.object.metadata?.namespace ?? '');
    });
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#queue.stop();
  }

  private issuerState(kind: string, namespace: string, name: string): IssuerState {
    const clusterScoped = kind === 'ClusterIssuer';
    if (!this.store.types.has(clusterScoped ? CLUSTER_ISSUERS : ISSUERS)) return { ready: false, message: 'cert-manager is not installed' };
    const issuer = this.store.get(clusterScoped ? CLUSTER_ISSUERS : ISSUERS, clusterScoped ? undefined : namespace, name);
    if (!issuer) return { ready: false, message: `Referenced "${kind}" not found: ${kind.toLowerCase()}s.cert-manager.io "${name}" not found` };
    const spec = rec(issuer.spec);
    if (spec.selfSigned !== undefined) return { ready: true, signer: undefined };
    if (spec.ca !== undefined) {
      const secretName = String(rec(spec.ca).secretName ?? '');
      const secret = this.store.get('secrets', clusterScoped ? CLUSTER_RESOURCE_NAMESPACE : namespace, secretName);
      if (!secret) return { ready: false, message: `Error getting keypair for CA issuer: secrets "${secretName}" not found` };
      return { ready: true, signer: { certPem: pem(secret, 'tls.crt'), keyPem: pem(secret, 'tls.key') } };
    }
    return { ready: false, message: 'the local cert-manager stand-in signs only with selfSigned and ca issuers' };
  }

  private async setStatus(resource: string, object: KubeObject, status: Json): Promise<void> {
    const current = rec(object.status);
    const conditions = Array.isArray(current.conditions) ? (current.conditions as Json[]) : [];
    const next = (status.conditions as Json[] | undefined)?.[0];
    const same = conditions[0]?.status === next?.status && conditions[0]?.message === next?.message && Object.keys(status).every((k) => k === 'conditions' || JSON.stringify(current[k]) === JSON.stringify(status[k]));
    if (same) return;
    if (next && conditions[0]?.status === next.status) next.lastTransitionTime = conditions[0]?.lastTransitionTime;
    await this.client.mergePatch({ resource, namespace: object.metadata?.namespace, name: object.metadata?.name ?? '' }, { status }, 'status').catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }

  private async sync(namespace: string): Promise<SyncResult> {
    if (!this.store.types.has(CERTIFICATES)) return;
    for (const issuer of this.store.list(ISSUERS, namespace)) {
      const state = this.issuerState('Issuer', namespace, issuer.metadata?.name ?? '');
      const isCa = rec(issuer.spec).ca !== undefined;
      const message = state.ready ? (isCa ? 'Signing CA verified' : '') : state.message;
      await this.setStatus(ISSUERS, issuer, { conditions: [readyCondition(state.ready, state.ready ? 'IsReady' : 'ErrGetKeyPair', message, issuer.metadata?.generation)] });
    }
    let nextRenewal = Number.POSITIVE_INFINITY;
    for (const certificate of this.store.list(CERTIFICATES, namespace)) {
      const renewAt = await this.syncCertificate(namespace, certificate);
      nextRenewal = Math.min(nextRenewal, renewAt);
    }
    return Number.isFinite(nextRenewal) ? { requeueAfterMs: Math.max(1000, Math.min(2 ** 31 - 1, nextRenewal - Date.now())) } : undefined;
  }

  /** Issues when needed; returns when the certificate is next due (ms since the epoch). */
  private async syncCertificate(namespace: string, certificate: KubeObject): Promise<number> {
    const spec = rec(certificate.spec);
    const ref = rec(spec.issuerRef);
    const kind = String(ref.kind ?? 'Issuer');
    const issuerName = String(ref.name ?? '');
    const secretName = String(spec.secretName ?? '');
    const existing = this.store.get('secrets', namespace, secretName);
    const renewBeforeMs = parseGoDuration(typeof spec.renewBefore === 'string' ? spec.renewBefore : undefined, 30 * 24 * 3_600_000);
    const current = existing ? this.matching(existing, spec) : undefined;
    const validTo = current ? Date.parse(current.validTo) : 0;
    if (current && validTo - renewBeforeMs > Date.now() && !issuingRequested(certificate)) {
      await this.setStatus(CERTIFICATES, certificate, this.readyStatus(certificate, new Date(current.validFrom), new Date(validTo), renewBeforeMs));
      return validTo - renewBeforeMs;
    }
    const state = this.issuerState(kind, namespace, issuerName);
    if (!state.ready) {
      await this.setStatus(CERTIFICATES, certificate, { conditions: [readyCondition(false, 'IssuerNotReady', `Issuer "${issuerName}" is not ready: ${state.message}`, certificate.metadata?.generation)] });
      return Number.POSITIVE_INFINITY;
    }
    const issued = issue(spec, state.signer);
    const caPem = state.signer ? state.signer.certPem : issued.certPem;
    await this.writeSecret(namespace, certificate, existing, { 'tls.crt': issued.certPem, 'tls.key': issued.keyPem, 'ca.crt': caPem }, kind, issuerName);
    await this.setStatus(CERTIFICATES, certificate, this.readyStatus(certificate, issued.notBefore, issued.notAfter, renewBeforeMs, Number(rec(certificate.status).revision ?? 0) + 1));
    return issued.notAfter.getTime() - renewBeforeMs;
  }

  /** The Secret's certificate when it still fits the spec (names and CA flag), read with node's own X509 parser. */
  private matching(secret: KubeObject, spec: Json): X509Certificate | undefined {
    try {
      const cert = new X509Certificate(pem(secret, 'tls.crt'));
      const sans = (cert.subjectAltName ?? '').split(', ').filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)).sort();
      const wanted = (Array.isArray(spec.dnsNames) ? spec.dnsNames.map(String) : []).sort();
      if (JSON.stringify(sans) !== JSON.stringify(wanted) || cert.ca !== (spec.isCA === true)) return undefined;
      return cert;
    } catch {
      return undefined;
    }
  }

  private readyStatus(certificate: KubeObject, notBefore: Date, notAfter: Date, renewBeforeMs: number, revision?: number): Json {
    const after = new Date(notAfter);
    return {
      conditions: [readyCondition(true, 'Ready', 'Certificate is up to date and has not expired', certificate.metadata?.generation)],
      notBefore: kubeTime(new Date(notBefore)),
      notAfter: kubeTime(after),
      renewalTime: kubeTime(new Date(after.getTime() - renewBeforeMs)),
      ...(revision !== undefined ? { revision } : {}),
    };
  }

  private async writeSecret(namespace: string, certificate: KubeObject, existing: KubeObject | undefined, files: Record<string, string>, issuerKind: string, issuerName: string): Promise<void> {
    const spec = rec(certificate.spec);
    const data = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    const annotations = {
      'cert-manager.io/alt-names': (Array.isArray(spec.dnsNames) ? spec.dnsNames : []).join(','),
      'cert-manager.io/certificate-name': certificate.metadata?.name ?? '',
      'cert-manager.io/common-name': String(spec.commonName ?? ''),
      'cert-manager.io/ip-sans': '',
      'cert-manager.io/issuer-group': 'cert-manager.io',
      'cert-manager.io/issuer-kind': issuerKind,
      'cert-manager.io/issuer-name': issuerName,
      'cert-manager.io/uri-sans': '',
    };
    const secretName = String(spec.secretName ?? '');
    if (existing) {
      await this.client.update({ resource: 'secrets', namespace, name: secretName }, { ...existing, data, metadata: { ...existing.metadata, annotations: { ...(existing.metadata?.annotations ?? {}), ...annotations } } });
    } else {
      await this.client.create('secrets', namespace, {
        metadata: { name: secretName, namespace, annotations, labels: { 'controller.cert-manager.io/fao': 'true' } },
        type: 'kubernetes.io/tls',
        data,
      });
    }
  }
}
