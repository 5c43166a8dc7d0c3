import type { RuleKind } from '../rule-kind.js';
import { allowedRegistries } from './allowed-registries.js';
import { celRule } from './cel.js';
import { defaultLabels } from './default-labels.js';
import { defaultResources } from './default-resources.js';
import { denyHostNamespaces } from './deny-host-namespaces.js';
import { denyPrivileged } from './deny-privileged.js';
import { requireLabels } from './require-labels.js';

/** The built-in rules a policy file can name, by `kind`. */
export const BUILT_IN_RULES: ReadonlyMap<string, RuleKind> = new Map(
  [requireLabels, denyPrivileged, denyHostNamespaces, allowedRegistries, defaultLabels, defaultResources, celRule].map((rule) => [rule.kind, rule]),
);
