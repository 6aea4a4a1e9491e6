import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * CSV exports of a list (POST /api/v1/emailList/{id}/exports): the
 * matching emails, exactly, under the documented header, downloaded from
 * the local S3-compatible server through the URL the export shows.
 */
const OUTCOMES = {
  'keep.one@example.com': 'deliverable',
  'keep.two@example.com': 'deliverable',
  'gone@example.com': 'undeliverable',
  'maybe@example.com': 'risky',
  'who@example.com': 'unknown',
} as const;

/** The documented columns, in order: the contract's five, then the email object's other fields. */
const COLUMNS = [
  'email',
  'status',
  'is_valid',
  'deliverability',
  'score',
  'id',
  'email_list_id',
  'can_connect',
  'mx_record_count',
  'connectable_mx_record_count',
  'is_username_generic',
  'is_alias',
  'is_gov',
  'is_edu',
  'is_mil',
  'is_free',
  'is_subdomain',
  'canonical_email',
  'is_disposable',
  'did_you_mean',
  'is_catch_all',
];

describe.each(transports('email'))('email list exports over %s', (transport) => {
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  let listId: number;

  const as = () => ({ token: t.token });

  /** Creates the export and waits until it shows its download. */
  async function exported(json: unknown, list = listId) {
    const created = await api.call('POST', `/api/v1/emailList/${list}/exports`, { ...as(), json });
    expect(created.status, created.text).toBe(201);
    let shown = created.body;
    await eventually(
      async () => {
        shown = (await api.call('GET', `/api/v1/emailList/${list}/exports/${created.body.id}`, as())).body;
        return shown.status === 'completed';
      },
      { what: `export ${created.body.id} completed` },
    );
    return { created: created.body, shown };
  }

  async function download(url: string) {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const text = await response.text();
    const [header, ...rows] = parse(text) as string[][];
    return { response, text, header: header!, rows };
  }

  beforeAll(async () => {
    env = await emailEnv();
    api = await apiClient('email', transport);
    t = await aTenant();
    // Given a list whose emails have each deliverability (set in the table: the validator's own outcomes are tested elsewhere)
    listId = (await api.call('POST', '/api/v1/emailList', { ...as(), json: { name: 'to export' } })).body.id;
    const added = await api.call('POST', `/api/v1/emailList/${listId}/emails`, { ...as(), json: { emails: Object.keys(OUTCOMES) } });
    expect(added.status, added.text).toBe(201);
    await eventually(async () => (await api.call('GET', `/api/v1/emailList/${listId}`, as())).body.status === 'completed', {
      what: `list ${listId} completed`,
    });
    for (const email of added.body.emails as { id: number; email: keyof typeof OUTCOMES }[]) {
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.email.key({ acct: t.accountId, email: email.id }),
          UpdateExpression: 'SET #result.deliverability = :d',
          ExpressionAttributeNames: { '#result': 'result' },
          ExpressionAttributeValues: { ':d': OUTCOMES[email.email] },
        }),
      );
    }
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });

  it('exports exactly the emails of the deliverability asked for, under the documented header', async () => {
    // When the deliverable and risky emails are exported
    const { created, shown } = await exported({ deliverability: ['deliverable', 'risky'] });
    // Then the create answered processing, and the export shows its rows and a download
    expect(created).toEqual({
      id: expect.stringMatching(/^exp_/),
      email_list_id: listId,
      status: 'processing',
      row_count: 0,
      download_url: null,
      created_at: expect.any(Number),
    });
    expect(shown).toMatchObject({ id: created.id, status: 'completed', row_count: 3 });
    // And the file is a CSV attachment with the documented columns and exactly the matching emails
    const { response, header, rows } = await download(shown.download_url);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; .*\.csv$/);
    expect(header).toEqual(COLUMNS);
    const records = rows.map((row) => Object.fromEntries(header.map((column, i) => [column, row[i]])));
    expect(records.map((r) => r.email).sort()).toEqual(['keep.one@example.com', 'keep.two@example.com', 'maybe@example.com']);
    // And each row is the email object as the API shows it, cell by cell
    const page = (await api.call('GET', `/api/v1/emailList/${listId}/emails`, as())).body.emails as Record<string, unknown>[];
    for (const record of records) {
      const email = page.find((e) => e.email === record.email)!;
      expect(Object.keys(email).sort()).toEqual([...COLUMNS].sort());
      for (const column of COLUMNS) expect(record[column], column).toBe(email[column] === null ? '' : String(email[column]));
    }
  });

  it('exports every email of the list without a filter', async () => {
    const { shown } = await exported({});
    const { rows } = await download(shown.download_url);
    expect(shown.row_count).toBe(Object.keys(OUTCOMES).length);
    expect(rows.map((row) => [row[0], row[3]]).sort()).toEqual(Object.entries(OUTCOMES).sort());
  });

  it('gives the header alone for a list with no emails', async () => {
    // Given an empty list
    const empty = (await api.call('POST', '/api/v1/emailList', { ...as(), json: { name: 'empty' } })).body.id as number;
    // When it is exported, then the file is the header row and nothing else
    const { shown } = await exported(undefined, empty);
    expect(shown.row_count).toBe(0);
    const { text, rows } = await download(shown.download_url);
    expect(rows).toEqual([]);
    expect(text).toBe(`${COLUMNS.join(',')}\r\n`);
  });

  it.each([
    [{ deliverability: ['deliverable', 'maybe'] }, 'deliverability[1]', /"maybe"/],
    [{ deliverability: 'deliverable' }, 'deliverability', /array/],
    [{ deliverability: [] }, 'deliverability', /at least one/],
    [{ format: 'xlsx' }, 'format', /Unknown parameter/],
  ])('refuses %j with a 400 naming %s', async (json, param, message) => {
    const res = await api.call('POST', `/api/v1/emailList/${listId}/exports`, { ...as(), json });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(res.body.error.message).toMatch(message);
  });

  it("answers 404 for an unknown list, and for an export asked for under another list's id", async () => {
    expect((await api.call('POST', '/api/v1/emailList/9999999/exports', { ...as(), json: {} })).status).toBe(404);
    const { created } = await exported({});
    const other = (await api.call('POST', '/api/v1/emailList', { ...as(), json: { name: 'other' } })).body.id as number;
    expect((await api.call('GET', `/api/v1/emailList/${other}/exports/${created.id}`, as())).status).toBe(404);
    expect((await api.call('GET', `/api/v1/emailList/${listId}/exports/exp_01JDQ7ZJ3N8Q9T2V4W6X8Y0Z1A`, as())).status).toBe(404);
    expect((await api.call('GET', `/api/v1/emailList/${listId}/exports/nonsense`, as())).status).toBe(404);
  });

  it('replays an idempotent create instead of starting a second export', async () => {
    const headers = { 'Idempotency-Key': `export-${listId}-${transport}` };
    const first = await api.call('POST', `/api/v1/emailList/${listId}/exports`, { ...as(), headers, json: {} });
    const again = await api.call('POST', `/api/v1/emailList/${listId}/exports`, { ...as(), headers, json: {} });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
  });
});
