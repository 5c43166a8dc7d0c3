/**
 * .dockerignore matching, following Docker's rules closely enough for the checks here: patterns
 * are relative to the context root, `*` and `?` stay within one path segment, `**` spans any
 * number of them, a pattern that matches a directory excludes everything below it, and a later
 * `!pattern` re-includes.
 */
export interface IgnoreRule {
  pattern: string;
  negated: boolean;
  regex: RegExp;
}

export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = normalise(negated ? line.slice(1) : line);
      return { pattern, negated, regex: globToRegex(pattern) };
    });
}

/** True when `path` (relative to the context) is left out of the build context. */
export function isIgnored(path: string, rules: readonly IgnoreRule[]): boolean {
  const candidates = selfAndParents(normalise(path));
  let ignored = false;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.regex.test(candidate))) ignored = !rule.negated;
  }
  return ignored;
}

function normalise(path: string): string {
  return path.trim().replace(/^\.\//, '').replace(/^\/+/, '').replace(/\/+$/, '');
}

function selfAndParents(path: string): string[] {
  const segments = path.split('/');
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

function globToRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (char === '*') {
      source += '[^/]*';
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}
