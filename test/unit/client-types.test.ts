import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_FILE, renderClientTypes } from '../../scripts/client-types.ts';

describe("the TypeScript client's generated types", () => {
  it('are what npm run client:types makes of docs/openapi.yaml now', { timeout: 60_000 }, async () => {
    // Given the document as it is, when its types are generated again, then they are the committed file:
    // a change to the document without `npm run client:types` fails here
    const current = readFileSync(GENERATED_FILE, 'utf8') === (await renderClientTypes());
    expect(current, 'clients/typescript/openapi.generated.ts is stale: run npm run client:types').toBe(true);
  });
});
