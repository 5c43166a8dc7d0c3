/**
 * The admission chain a write goes through (contract 3.7, the handlers of pkg/endpoints):
 * mutating webhooks on the decoded and defaulted object, then the store's own checks, then
 * validating webhooks on the object about to be stored. The double calls whatever is plugged in
 * here; ../admission-caller/write-admission.ts plugs in the webhook caller.
 */
import type { UserInfo } from './identity.js';
import type { KubeObject } from './objects.js';
import type { ResourceType } from './resources.js';
import type { StatusBody } from './status.js';

export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  type: ResourceType;
  subresource?: string;
  /** For a Namespace, its own name. */
  namespace: string;
  /** Empty for a CREATE with generateName. */
  name: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  user: UserInfo;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions as received. */
  options: Record<string, unknown>;
}

export type MutateOutcome = { object: KubeObject | undefined } | { status: StatusBody };

/** One request's pass through admission; warnings gather over both phases. */
export interface AdmissionRun {
  mutate(): Promise<MutateOutcome>;
  /** The Status that ends the request, or undefined to go on and store `object`. */
  validate(object: KubeObject | undefined): Promise<StatusBody | undefined>;
  warnings(): string[];
}

export type WriteAdmission = (attributes: AdmissionAttributes) => AdmissionRun;

/** No webhooks: what the double does unless admission is plugged in. */
export const NO_ADMISSION: WriteAdmission = (attributes) => ({
  mutate: async () => ({ object: attributes.object }),
  validate: async () => undefined,
  warnings: () => [],
});
