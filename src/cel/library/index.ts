/**
 * Kubernetes' CEL libraries by the version they arrived in, as k8s.io/apiserver's
 * pkg/cel/environment/base.go (1.36) adds them; the environment of a version has every library
 * whose `since` is at most that version. docs/cel.md publishes this table.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { registerAdmissionTypes } from './admission-types.js';
import { registerAuthorizer, registerAuthorizerSelectors } from './authorizer.js';
import { registerCidr } from './cidr.js';
import { registerConversions } from './conversions.js';
import { registerTwoVariableComprehensions } from './comprehensions.js';
import { registerFormat } from './format.js';
import { registerIp } from './ip.js';
import { registerExtendedLists } from './lists.js';
import { registerOptionalFirstLast, registerOptionalFlatMap, registerOptionalValues } from './optional.js';
import { registerQuantity } from './quantity.js';
import { registerSemver } from './semver.js';
import { registerSets } from './sets.js';
import { registerStringsV2 } from './strings.js';

export interface CelLibrary {
  /** As base.go names it. */
  name: string;
  /** The Kubernetes 1.x minor it arrived in. */
  since: number;
  register(env: Environment): void;
}

export const CEL_LIBRARIES: readonly CelLibrary[] = [
  { name: 'AdmissionRequest type (request)', since: 0, register: registerAdmissionTypes },
  { name: 'cel-go standard conversions (int(uint), int(duration), int(timestamp), string(timestamp), string(duration))', since: 0, register: registerConversions },
  { name: 'library.Authz', since: 27, register: registerAuthorizer },
  { name: 'library.Quantity', since: 28, register: registerQuantity },
  { name: 'cel.OptionalTypes (ofNonZeroValue, optMap)', since: 28, register: registerOptionalValues },
  { name: 'cel.OptionalTypes v1 (optFlatMap)', since: 29, register: registerOptionalFlatMap },
  { name: 'ext.Strings v2 (format, strings.quote)', since: 29, register: registerStringsV2 },
  { name: 'ext.Sets', since: 29, register: registerSets },
  { name: 'library.IP', since: 30, register: registerIp },
  { name: 'library.CIDR', since: 30, register: registerCidr },
  { name: 'library.Format', since: 31, register: registerFormat },
  { name: 'library.AuthzSelectors', since: 31, register: registerAuthorizerSelectors },
  { name: 'ext.TwoVarComprehensions', since: 32, register: registerTwoVariableComprehensions },
  { name: 'library.SemverLib v1', since: 33, register: registerSemver },
  { name: 'cel.OptionalTypes v2 (first, last, unwrap)', since: 33, register: registerOptionalFirstLast },
  { name: 'ext.Lists v3', since: 34, register: registerExtendedLists },
];

/** The libraries of Kubernetes 1.`minor`, in the order they arrived. */
export function librariesIn(minor: number): CelLibrary[] {
  return CEL_LIBRARIES.filter((library) => library.since <= minor);
}
