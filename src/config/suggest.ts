import { closestMatch } from 'leven';

/**
 * What `word` was most likely meant to be: the candidates it begins (`--shutdown` for
 * `--shutdown-timeout` and `--shutdown-delay`), else the nearest by edit distance within a third
 * of its length (at least 2), as git and npm suggest on a typo; none when nothing is close.
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const extending = candidates.filter((candidate) => candidate.startsWith(word) && candidate !== word);
  if (word.replace(/^-+/, '').length >= 3 && extending.length > 0 && extending.length <= 3) return extending;
  const match = closestMatch(word, candidates, { maxDistance: Math.max(2, Math.floor(word.length / 3)) });
  return match === undefined ? [] : [match];
}

/** "; did you mean X?" (or "X or Y") for a suggestion, nothing without one. */
export function didYouMean(word: string, candidates: readonly string[], quote = ''): string {
  const matches = nearest(word, candidates).map((match) => `${quote}${match}${quote}`);
  return matches.length === 0 ? '' : `; did you mean ${matches.join(' or ')}?`;
}
