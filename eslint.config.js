// ESLint for the TypeScript sources (`npm run lint`, run by .ci/run). Formatting is Prettier's
// business (.prettierrc.json), so no stylistic rule is here.
import js from '@eslint/js';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Regular expressions: mistakes, and patterns whose backtracking is polynomial or exponential in the
  // input (no-super-linear-backtracking, no-dupe-disjunctions, no-misleading-capturing-group ...).
  regexp.configs['flat/recommended'],
  {
    rules: {
      // A leading underscore marks a value left out on purpose (`const { pk: _pk, ...rest } = item`).
      // The expression builder (shared/db/expression.ts) adds clauses with tagged templates as statements.
      '@typescript-eslint/no-unused-expressions': ['error', { allowTaggedTemplates: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // The recommended set's matters of style (`\w` for `[A-Za-z0-9_]`, the `i` flag's ranges, groups left capturing).
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
      'regexp/no-unused-capturing-group': 'off',
    },
  },
  {
    // The code that sees request, network and log text: also no pattern that, searching a long input, retries
    // from every position (quadratic), as `/[^@]+@x/g` over a run without `@` does. Tests and tools read our own files.
    files: ['shared/**', 'functions/**', 'scripts/**'],
    rules: { 'regexp/no-super-linear-move': 'error' },
  },
  {
    // Plain JavaScript (scripts/on-supported-node.js, which runs before any loader can) is type-checked by tsc
    // (checkJs in tsconfig.json), which knows Node's globals; ESLint's no-undef does not, and TypeScript files skip it too.
    files: ['**/*.js'],
    rules: { 'no-undef': 'off' },
  },
);
