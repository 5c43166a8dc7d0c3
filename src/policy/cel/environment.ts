import { Environment } from '@marcbachmann/cel-js';
import { registerKubernetesLibrary } from './kubernetes-library.js';

/**
 * Structural limits checked when an expression is parsed, near Kubernetes' own (an expression
 * of a ValidatingAdmissionPolicy may be 5 KiB long).
 */
export const MAX_EXPRESSION_LENGTH = 5 * 1024;
const LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 };

/** The variables a validation expression sees (ValidatingAdmissionPolicy's, minus authorizer). */
export const VALIDATION_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'] as const;
/** The variables a matchCondition sees (kube-apiserver's; authorizer compiles but cannot be evaluated here). */
export const MATCH_CONDITION_VARIABLES = ['object', 'oldObject', 'request', 'authorizer'] as const;

const VARIABLE_TYPES: Record<string, string> = { variables: 'map', request: 'map', authorizer: 'Authorizer' };

let library: Environment | undefined;

/** The shared base: options and the Kubernetes library functions; frozen once cloned. */
function base(): Environment {
  library ??= registerKubernetesLibrary(
    new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false, limits: LIMITS }),
  );
  return library;
}

/** An environment declaring `names` as dynamically typed variables. */
export function environmentWith(names: readonly string[]): Environment {
  const env = base().clone();
  for (const name of names) env.registerVariable(name, VARIABLE_TYPES[name] ?? 'dyn');
  return env;
}
