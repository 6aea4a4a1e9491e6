// ESLint for the TypeScript sources (`npm run lint`, run by .ci/run). Formatting is Prettier's
// business (.prettierrc.json), so no stylistic rule is here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore marks a value left out on purpose (`const { pk: _pk, ...rest } = item`).
      // The expression builder (shared/db/expression.ts) adds clauses with tagged templates as statements.
      '@typescript-eslint/no-unused-expressions': ['error', { allowTaggedTemplates: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
);
