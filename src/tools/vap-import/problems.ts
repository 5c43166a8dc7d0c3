/** What the import could not carry over exactly, named by object and field. */
export interface ImportProblem {
  /** `Kind/name (file document N)`. */
  object: string;
  field: string;
  problem: string;
  /** 'left out': the entry was written without it; 'not imported': no entry was written for it. */
  effect: 'left out' | 'not imported';
}

export function formatProblem(p: ImportProblem): string {
  return `${p.object}: ${p.field}: ${p.problem} (${p.effect})`;
}
