/** What the tls part hands to the rest of the server. */
import type { EventEmitter } from 'node:events';

/** The material the HTTPS server serves, plus the CA bundle that gets registered for it. */
export interface ServingMaterial {
  certPem: string;
  keyPem: string;
  /** Exactly what gets registered as caBundle: one or more CA certificates. */
  caBundlePem: string;
  certNotAfter: Date;
  /** NotAfter of the CA that signed the served certificate. */
  caNotAfter: Date;
}

export interface TlsMaterialEvents {
  /** A new certificate/key to serve (swap the secure context). */
  'serving-change': [material: ServingMaterial];
  /** A new caBundle to register; always emitted before a serving change that depends on it. */
  'ca-bundle-change': [caBundlePem: string];
}

/** Generated or file-backed serving material; both modes offer the same face. */
export interface TlsMaterialSource extends EventEmitter<TlsMaterialEvents> {
  /**
   * Initial load (or generation); throws an Error saying what is wrong and where. `holdWrites`:
   * what it would write (generate mode's new or renewed material) waits for persist().
   */
  load(signal: AbortSignal, options?: { holdWrites?: boolean }): Promise<ServingMaterial>;
  /** Writes what load() held back (nothing in files mode, which never writes). */
  persist(signal: AbortSignal): Promise<void>;
  /** The material in force; throws before load() succeeded. */
  current(): ServingMaterial;
  /** Starts watching / renewal timers; they stop when `signal` aborts or on stop(). */
  start(signal: AbortSignal): void;
  /** Stops everything start() began and waits until it has wound down. */
  stop(): Promise<void>;
}

export interface ClientCaEvents {
  'client-ca-change': [caPem: string];
}

/** The CA bundle that client certificates (kube-apiserver's) must chain to, reloaded like serving material. */
export interface ClientCaSource extends EventEmitter<ClientCaEvents> {
  load(signal: AbortSignal): Promise<string>;
  current(): string;
  start(signal: AbortSignal): void;
  stop(): Promise<void>;
}
