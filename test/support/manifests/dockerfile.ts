/**
 * Just enough of the Dockerfile grammar to check the image's properties without a Docker engine
 * (none runs on these machines): comments, line continuations, ARGs before the first FROM and
 * their defaults in FROM, stages with their names.
 */
export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuations joined. */
  args: string;
  line: number;
}

export interface Stage {
  /** The base image with global ARG defaults substituted. */
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

export interface Dockerfile {
  globalArgs: Record<string, string>;
  stages: Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const instruction of instructionsOf(text)) {
    if (instruction.keyword === 'FROM') {
      stages.push(stageFrom(instruction, globalArgs));
    } else if (stages.length === 0) {
      if (instruction.keyword !== 'ARG') throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
      const [name, value = ''] = instruction.args.split('=', 2);
      globalArgs[name!.trim()] = value.trim();
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

function stageFrom(instruction: Instruction, args: Record<string, string>): Stage {
  const words = instruction.args.split(/\s+/).filter((w) => !w.startsWith('--'));
  const image = (words[0] ?? '').replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => args[braced ?? bare ?? ''] ?? '');
  const asIndex = words.findIndex((w) => w.toUpperCase() === 'AS');
  return { image, name: asIndex >= 0 ? words[asIndex + 1] : undefined, instructions: [] };
}

function* instructionsOf(text: string): Generator<Instruction> {
  const lines = text.split('\n');
  let pending = '';
  let startLine = 0;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (pending !== '' && line.startsWith('#')) continue;
    if (pending === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trimEnd()} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/s.exec(full);
    if (match) yield { keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: startLine };
  }
}

/** The exec-form argument list of an ENTRYPOINT/CMD, or undefined for the shell form. */
export function execFormArgs(instruction: Instruction): string[] | undefined {
  if (!instruction.args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(instruction.args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) return undefined;
  return parsed;
}

export interface CopySource {
  /** --from=<stage>, or undefined for the build context. */
  from: string | undefined;
  sources: string[];
  destination: string;
}

export function copySources(instruction: Instruction): CopySource {
  const words = instruction.args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith('--'));
  const paths = words.filter((w) => !w.startsWith('--'));
  const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
}
