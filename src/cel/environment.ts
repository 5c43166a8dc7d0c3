import { Environment } from '@marcbachmann/cel-js';
import { installCheckerExtensions } from './engine/checker-extensions.js';
import { installSyntaxExtensions } from './engine/syntax-extensions.js';
import { literalProblemOf, type LiteralProblem, type LiteralRules } from './engine/literal-validators.js';
import { registerKubernetesLibrary } from './kubernetes-library.js';
import { CURRENT_KUBERNETES_RELEASE, type KubernetesVersion } from './kubernetes-version.js';
import { AUTHORIZER_TYPE } from './library/authorizer.js';
import { librariesIn } from './library/index.js';

/**
 * Structural limits checked when an expression is parsed, near Kubernetes' own (an expression
 * of a ValidatingAdmissionPolicy may be 5 KiB long).
 */
export const MAX_EXPRESSION_LENGTH = 5 * 1024;
const LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 };

/** The variables a validation expression sees (a ValidatingAdmissionPolicy's). */
export const VALIDATION_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'authorizer', 'variables'] as const;
/** The variables a matchCondition sees (kube-apiserver's). */
export const MATCH_CONDITION_VARIABLES = ['object', 'oldObject', 'request', 'authorizer'] as const;

/** `request` is kube-apiserver's typed AdmissionRequest (library/admission-types.ts): `request.usrInfo` does not compile. */
const VARIABLE_TYPES: Record<string, string> = { variables: 'map', request: 'kubernetes.AdmissionRequest', authorizer: AUTHORIZER_TYPE };

installSyntaxExtensions();
installCheckerExtensions();

const bases = new Map<number, Environment>();
const literalRules = new WeakMap<Environment, LiteralRules>();

function rulesFor(minor: number): LiteralRules {
  return { homogeneous: minor >= 29 ? 'exact' : 'assignable', validateTimeLiterals: minor >= 29, crossTypeNumericComparisons: minor >= 28, validateExtensionCalls: minor >= 29 };
}

/** The library of Kubernetes `version` (k8s.io/apiserver/pkg/cel/environment/base.go); frozen once cloned. */
function base(version: KubernetesVersion): Environment {
  let env = bases.get(version.minor);
  if (!env) {
    env = new Environment({ enableOptionalTypes: version.minor >= 28, homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false, limits: LIMITS });
    registerKubernetesLibrary(env);
    for (const library of librariesIn(version.minor)) library.register(env);
    bases.set(version.minor, env);
  }
  return env;
}

/** An environment of Kubernetes `version` (by default the current release) declaring `names` as variables. */
export function environmentWith(names: readonly string[], version: KubernetesVersion = CURRENT_KUBERNETES_RELEASE): Environment {
  const env = base(version).clone();
  for (const name of names) env.registerVariable(name, VARIABLE_TYPES[name] ?? 'dyn');
  literalRules.set(env, rulesFor(version.minor));
  return env;
}

/** What kube-apiserver's validators refuse in a checked expression of `env` that its type checker lets through. */
/** cel.ValidateRegexLiterals (1.29, with the other literal validators): a literal pattern that does not compile is refused. */
export function validatesRegexLiterals(env: Environment): boolean {
  return literalRules.get(env)?.validateTimeLiterals ?? true;
}

export function kubernetesValidationProblem(env: Environment, ast: unknown): LiteralProblem | undefined {
  const rules = literalRules.get(env);
  return rules ? literalProblemOf(ast, rules) : undefined;
}
