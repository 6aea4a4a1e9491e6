/** What `import()` of a CommonJS package gives: its exports on the namespace, or only under `default`. */
export type LoadedCommonJs<T extends object> = T | { default: T };

/**
 * The exports of a CommonJS package loaded with `import()`, whoever loads it.
 * Node, tsx and a single esbuild bundle put its named exports on the
 * namespace; a chunk esbuild splits off for it has only `default` (the
 * exports object). `name` is one of its exports, to tell the two apart.
 */
export function commonJsExports<T extends object>(namespace: LoadedCommonJs<T>, name: keyof T): T {
  return hasExport(namespace, name) ? namespace : namespace.default;
}

const hasExport = <T extends object>(namespace: LoadedCommonJs<T>, name: keyof T): namespace is T => name in namespace;
