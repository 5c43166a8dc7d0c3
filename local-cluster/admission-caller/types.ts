/** The admission caller's public types. */
import type { KubeObject, StatusBody } from '../fake-apiserver/index.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmitRequest {
  operation: Operation;
  /** The new object (CREATE, UPDATE) or the connect options (CONNECT). */
  object?: KubeObject;
  /** The stored object (UPDATE, DELETE). */
  oldObject?: KubeObject;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  /** Defaults to object/oldObject metadata; a Namespace's request namespace is its own name. */
  namespace?: string;
  name?: string;
  userInfo?: UserInfo;
  dryRun?: boolean;
  /** CreateOptions/UpdateOptions/DeleteOptions; defaulted per operation, null for CONNECT. */
  options?: Record<string, unknown> | null;
  /** What is left of the user's request deadline; default 34 s (the handlers' limit). */
  requestTimeoutMs?: number;
  /** The kube-apiserver (its index) that serves the request; default the next one up, round robin. */
  apiserver?: number;
}

export type AdmitResult =
  | { allowed: true; object: KubeObject | undefined; warnings: string[]; auditAnnotations: Record<string, string> }
  | { allowed: false; status: StatusBody; warnings: string[]; auditAnnotations: Record<string, string> };

export interface ServiceEndpoint {
  host: string;
  port: number;
}

/** Where `<name>.<namespace>.svc:<port>` really listens, as the apiserver's service resolver knows. */
export type ServiceResolver = (namespace: string, name: string, port: number) => ServiceEndpoint;

/** One webhook call as the caller made it, for tests to inspect. */
export interface CallRecord {
  /** The kube-apiserver that made the call (`kube-apiserver-N`). */
  apiserver: string;
  configuration: string;
  webhook: string;
  phase: 'mutating' | 'validating';
  round: number;
  url: string;
  startedAt: number;
  endedAt: number;
  outcome: 'allowed' | 'denied' | 'error';
  error?: string;
  /** The webhook's failurePolicy as the calling kube-apiserver's cache held it (defaulted: Fail). */
  failurePolicy: 'Fail' | 'Ignore';
  /** The object's namespace and name as the review carried them (no name in a generateName create's mutating phase). */
  namespace: string;
  name: string;
  /** The warnings of the webhook's answer (none when the call failed). */
  warnings: string[];
}
