/**
 * The exports of a CommonJS package loaded with `import()`, whoever loads it.
 * Node, tsx and a single esbuild bundle put its named exports on the
 * namespace; a chunk esbuild splits off for it has only `default` (the
 * exports object). `name` is one of its exports, to tell the two apart.
 */
export function commonJsExports<T extends object>(namespace: T, name: keyof T): T {
  return name in namespace ? namespace : (namespace as unknown as { default: T }).default;
}
