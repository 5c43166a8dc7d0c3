/** An error a library function raises: the evaluation fails with this message (as cel-go's types.NewErr). */
export class CelFunctionError extends Error {
  override readonly name = 'CelFunctionError';
}

export function fail(message: string): never {
  throw new CelFunctionError(message);
}

/** Registers `name` as a namespace (`sets`, `strings`, `lists`, `format`): a constant whose functions are `Name.fn(...)`. */
export function namespaceType(name: string): { typeName: string; value: object } {
  const typeName = `${name[0]!.toUpperCase()}${name.slice(1)}Namespace`;
  const ctor = { [typeName]: class {} }[typeName]!;
  return { typeName, value: new ctor() };
}
