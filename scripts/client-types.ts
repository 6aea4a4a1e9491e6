/**
 * Writes clients/typescript/openapi.generated.ts, the TypeScript client's
 * types, from docs/openapi.yaml:
 *   npm run client:types
 * Run it after changing the document; test/unit/client-types.test.ts fails
 * while the committed file differs from what this would write.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

export const GENERATED_FILE = fileURLToPath(new URL('../clients/typescript/openapi.generated.ts', import.meta.url));
const DOCUMENT = new URL('../docs/openapi.yaml', import.meta.url);

/** The file's whole text, formatted as `npm run lint` expects, so the check and the formatter agree. */
export async function renderClientTypes(): Promise<string> {
  const ast = await openapiTS(DOCUMENT, { silent: true });
  const header = `${COMMENT_HEADER.trimEnd()}\n// From docs/openapi.yaml by \`npm run client:types\` (scripts/client-types.ts).\n\n`;
  const options = await resolveConfig(GENERATED_FILE);
  return format(header + astToString(ast), { ...options, parser: 'typescript' });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await renderClientTypes();
  writeFileSync(GENERATED_FILE, text);
  console.log(`wrote ${GENERATED_FILE} (${Math.round(text.length / 1024)} KiB)`);
}
