import { randomUUID } from 'node:crypto';
import { request } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity, connect, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import type { Logger } from 'pino';
import { isAbortError, withTimeout } from '../util/abort.js';
import { retryWithBackoff } from '../util/backoff.js';

export interface SelfCheckOptions {
  /** Where the listener is reachable from this process (0.0.0.0 is dialled as 127.0.0.1). */
  host: string;
  port: number;
  /** `<service>.<namespace>.svc`: the name kube-apiserver verifies. */
  serverName: string;
  /** Exactly the caBundle that will be registered: the only trust root. */
  caBundlePem: string;
  /**
   * A webhook path to send the synthetic review to; undefined checks the TLS handshake only
   * (no webhooks, or client-certificate mode, where this process has no client certificate).
   */
  path: string | undefined;
  namespace: string;
  deadlineMs: number;
  attemptTimeoutMs?: number;
  signal: AbortSignal;
  logger: Logger;
}

export interface SelfCheckResult {
  attempts: number;
  ms: number;
}

/** A review no handler can act on: dryRun, in the server's own (always excluded) namespace. */
function syntheticReview(namespace: string): { uid: string; body: string } {
  const uid = randomUUID();
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-admission-server-self-check', namespace } };
  const review = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      name: object.metadata.name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:kube-admission-server:self-check' },
      object,
      oldObject: null,
      dryRun: true,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
  return { uid, body: JSON.stringify(review) };
}

function checkReviewResponse(status: number | undefined, text: string, uid: string): void {
  if (status !== 200) throw new Error(`HTTP ${status}: ${text.slice(0, 200)}`);
  const review = JSON.parse(text) as { apiVersion?: string; kind?: string; response?: { uid?: string; allowed?: unknown } };
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') throw new Error('the answer is not an admission.k8s.io/v1 AdmissionReview');
  if (review.response?.uid !== uid) throw new Error(`the answer's response.uid is "${review.response?.uid}", expected "${uid}"`);
  if (typeof review.response.allowed !== 'boolean') throw new Error('the answer has no boolean response.allowed');
}

/** Where the listener is and what a caller verifies it with. */
export type HandshakeTarget = Pick<SelfCheckOptions, 'host' | 'port' | 'serverName' | 'caBundlePem'>;

/** TLS only: the chain verifies against the caBundle and the certificate covers the name. */
export function verifiedHandshake(options: HandshakeTarget, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      ...dialOptions(options),
      signal,
    } as ConnectionOptions);
    socket.once('secureConnect', () => {
      socket.end();
      resolve();
    });
    socket.once('error', reject);
  });
}

function dialOptions(options: HandshakeTarget) {
  return {
    host: options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host,
    port: options.port,
    // SNI carries host names only (RFC 6066); an IP is verified against the IP SANs alone.
    ...(isIP(options.serverName) ? {} : { servername: options.serverName }),
    ca: options.caBundlePem,
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(options.serverName, cert),
    minVersion: 'TLSv1.2' as const,
  };
}

/** A verified handshake with the listener for each bundle (each attempt bounded): what kube-apiserver would do with each caBundle. */
export async function verifyWithEach(target: Omit<HandshakeTarget, 'caBundlePem'>, bundlePems: readonly string[], signal: AbortSignal, attemptTimeoutMs = 2000): Promise<void> {
  for (const caBundlePem of bundlePems) await withTimeout(attemptTimeoutMs, signal, (attempt) => verifiedHandshake({ ...target, caBundlePem }, attempt));
}

/** One attempt: verified TLS exactly as kube-apiserver does it, then the synthetic review. */
function attemptOnce(options: SelfCheckOptions, signal: AbortSignal): Promise<void> {
  if (options.path === undefined) return verifiedHandshake(options, signal);
  const path = options.path;
  const { uid, body } = syntheticReview(options.namespace);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...dialOptions(options),
        method: 'POST',
        path: `${path}?timeout=2s`,
        agent: false,
        signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'kube-admission-server-self-check' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            checkReviewResponse(res.statusCode, Buffer.concat(chunks).toString('utf8'), uid);
            resolve();
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Proves, before anything is registered, that kube-apiserver will be able to call this server:
 * the chain verifies against the caBundle, the certificate covers `<service>.<namespace>.svc`, and
 * a review gets a well-formed answer. Retries with backoff (100 ms .. 2 s) until the deadline.
 */
export async function runSelfCheck(options: SelfCheckOptions): Promise<SelfCheckResult> {
  const started = performance.now();
  let attempts = 0;
  let lastError: unknown;
  try {
    await withTimeout(options.deadlineMs, options.signal, (signal) =>
      retryWithBackoff(
        async () => {
          attempts++;
          await withTimeout(options.attemptTimeoutMs ?? 2000, signal, (attemptSignal) => attemptOnce(options, attemptSignal));
        },
        {
          initialMs: 100,
          maxMs: 2000,
          maxAttempts: Number.MAX_SAFE_INTEGER,
          signal,
          onRetry: (error, attempt, delayMs) => {
            lastError = error;
            options.logger.warn({ attempt: attempt + 1, delayMs, error: error instanceof Error ? error.message : String(error) }, 'self-check attempt failed');
          },
        },
      ),
    );
  } catch (error) {
    if (options.signal.aborted) throw new Error('self-check cancelled', { cause: error });
    const cause = isAbortError(error) && lastError !== undefined ? lastError : error;
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`self-check failed: no valid answer from https://${options.serverName}:${options.port} within ${options.deadlineMs} ms (${attempts} attempts); last error: ${why}`, { cause });
  }
  return { attempts, ms: Math.round(performance.now() - started) };
}
