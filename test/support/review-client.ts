import { request, type Agent } from 'node:https';

export interface ReviewReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): unknown;
}

/** POSTs a body to the webhook server over verified TLS, as kube-apiserver would (SNI = service name). */
export function postReview(options: {
  port: number;
  path: string;
  body: unknown;
  caPem: string;
  serverName: string;
  agent?: Agent;
  timeoutMs?: number;
}): Promise<ReviewReply> {
  const payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: 'POST',
        servername: options.serverName,
        ca: options.caPem,
        agent: options.agent ?? false,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A v1 Pod CREATE review like the contract's section 1.3 example. */
export function podCreateReview(uid: string, pod: Record<string, unknown>, namespace = 'team-a'): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: 'web',
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    },
  };
}
