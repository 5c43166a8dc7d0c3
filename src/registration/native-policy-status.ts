/** One warning kube-apiserver wrote when it type-checked a policy's expressions against the matched kinds. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

export interface PolicyCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** What kube-apiserver said of a ValidatingAdmissionPolicy's current generation. */
export interface TypeCheckStatus {
  generation: number;
  warnings: ExpressionWarning[];
  /** Conditions whose status is not True. */
  failingConditions: PolicyCondition[];
  conditions: PolicyCondition[];
}

interface LivePolicy {
  metadata?: { generation?: number };
  status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: ExpressionWarning[] | null }; conditions?: PolicyCondition[] | null };
}

/**
 * The type-checking status of a policy as read from the cluster, or undefined while it is not yet
 * for the current generation (kube-controller-manager type-checks after each write; a status for
 * an older generation says nothing of the expressions now in place).
 */
export function typeCheckStatus(live: unknown): TypeCheckStatus | undefined {
  const { metadata, status } = (live ?? {}) as LivePolicy;
  if (status?.observedGeneration === undefined || status.observedGeneration !== metadata?.generation) return undefined;
  const conditions = status.conditions ?? [];
  return { generation: status.observedGeneration, warnings: status.typeChecking?.expressionWarnings ?? [], conditions, failingConditions: conditions.filter((c) => c.status !== 'True') };
}

/** One comment line for `render` with a cluster: what kube-apiserver said of the policy now registered. */
export function describeTypeCheck(name: string, live: unknown): string {
  if (live === undefined) return `# ValidatingAdmissionPolicy ${name}: not in the cluster yet (the leader creates it)`;
  const generation = (live as LivePolicy).metadata?.generation;
  const status = typeCheckStatus(live);
  if (!status) return `# ValidatingAdmissionPolicy ${name}: generation ${generation ?? '?'} not type-checked by kube-apiserver yet`;
  const parts = [
    status.warnings.length === 0 ? 'no warnings' : `${status.warnings.length} warning${status.warnings.length === 1 ? '' : 's'}: ${status.warnings.map((w) => `${w.fieldRef}: ${oneLine(w.warning)}`).join('; ')}`,
    ...status.failingConditions.map((c) => `condition ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${oneLine(c.message)}` : ''}`),
  ];
  return `# ValidatingAdmissionPolicy ${name}: type-checked by kube-apiserver (generation ${status.generation}): ${parts.join('; ')}`;
}

// A warning can span lines (cel-go's pointer to the column): a comment must stay one line.
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ');
