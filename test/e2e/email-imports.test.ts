import { randomBytes, randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCredits } from '#shared/data/accounts';
import { getEmailList } from '#shared/data/email-lists';
import { getImport } from '#shared/data/imports';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';
import { claimJob, LEASE_MS } from '#shared/data/jobs';
import { addChunk, CHUNK_ROWS, claimChunk } from '#shared/email/import-job';
import { importObjectKey, importSubject, type ImportPayload } from '#shared/email/imports';
import { putObject } from '#shared/files/object-parts';
import { listImport } from '#shared/email/list-import';
import { runJob } from '#shared/jobs/run';
import { resetStorage } from '#shared/files/storage';
import { handler as purgeWorker } from '../../functions/workers/purge.ts';
import { handler as sweeper } from '../../functions/workers/sweeper.ts';
import { aTenant, type Tenant } from '../steps/given.ts';
import { emailEnv, type EmailEnv } from '../steps/email-env.ts';
import { eventually } from '../steps/eventually.ts';
import { cuttingProxy } from '../steps/cutting-proxy.ts';
import { jobEvent, jobOf, timePasses } from '../steps/jobs.ts';
import { apiClient, transports, type ApiClient } from '../steps/when.ts';

/**
 * CSV imports into an email list: a presigned upload to the local
 * S3-compatible server (which checks signatures as S3 does), then the
 * `list-import` job on the purge queue's worker judges the file and adds
 * its rows as `POST .../emails` would, with exact counts, once each.
 */
describe.each(transports('email'))('email list imports over %s', (transport) => {
  if (transport === 'remote') {
    // The crash case drives the job in-process; the others would run remotely but share its setup.
    it.skip('runs locally only', () => undefined);
    return;
  }
  let api: ApiClient;
  let env: EmailEnv | undefined;
  let t: Tenant;
  const as = () => ({ token: t.token });

  beforeAll(async () => {
    env = await emailEnv();
    api = await apiClient('email', transport);
    t = await aTenant();
    await addCredits(t.accountId, 1_000);
  });
  afterAll(async () => {
    await api.close();
    await env?.stop();
  });

  const newList = async () => (await api.call('POST', '/api/v1/emailList', { ...as(), json: { name: `imports ${randomUUID()}` } })).body;
  const getList = async (id: number) => (await api.call('GET', `/api/v1/emailList/${id}`, as())).body;
  const listEmails = async (id: number) =>
    (await api.call('GET', `/api/v1/emailList/${id}/emails`, as())).body.emails.map((e: { email: string }) => e.email);
  const credits = async () => (await api.call('GET', '/api/v1/account', as())).body.credits as number;
  const createImport = async (listId: number) => {
    const created = await api.call('POST', `/api/v1/emailList/${listId}/imports`, { ...as(), json: {} });
    expect(created.status).toBe(201);
    return created.body;
  };
  const upload = async (imp: { upload: { url: string; method: string; headers: Record<string, string> } }, body: string | Uint8Array) => {
    const response = await fetch(imp.upload.url, { method: imp.upload.method, headers: imp.upload.headers, body });
    expect(response.status, await response.text()).toBe(200);
  };
  const show = (listId: number, id: string) => api.call('GET', `/api/v1/emailList/${listId}/imports/${id}`, as());
  /** Polls the import as a client would (each GET also starts it once its file is there) until it ends. */
  const ended = (listId: number, id: string) =>
    eventually(
      async () => {
        const body = (await show(listId, id)).body;
        return body.status === 'completed' || body.status === 'error' ? body : undefined;
      },
      { what: `import ${id} ended`, timeoutMs: 60_000, intervalMs: 250 },
    );

  it('imports a CSV with a header, quoted commas and bad rows with exact counts, charging each accepted address once', async () => {
    // Given a list that already holds one address, and the account's credits
    const list = await newList();
    await api.call('POST', `/api/v1/emailList/${list.id}/emails`, { ...as(), json: { emails: ['pre@example.com'] } });
    const creditsBefore = await credits();
    // When a CSV is imported whose address column is headed EMAIL after another column, with quoted commas,
    // an address repeated in another case, one already in the list, one that is no address and an empty cell
    const imp = await createImport(list.id);
    expect(imp).toEqual({
      id: expect.stringMatching(/^imp_[0-9A-Z]{26}$/),
      email_list_id: list.id,
      status: 'awaiting_upload',
      upload: {
        url: expect.stringContaining('X-Amz-Signature='),
        method: 'PUT',
        headers: { 'Content-Type': 'text/csv', 'x-amz-tagging': 'state=unattached', 'If-None-Match': '*' },
        expires_at: expect.any(Number),
      },
      row_count: null,
      accepted_count: 0,
      rejected_count: 0,
      error: null,
      created_at: expect.any(Number),
    });
    expect(imp.upload.expires_at - imp.created_at).toBeLessThanOrEqual(3600);
    const csv = [
      'id,Name,EMAIL,company',
      '1,"Doe, Jane",jane@example.com,"ACME, Inc."',
      '2,Bob,BOB@example.com,',
      '3,"bob, again",bob@example.com,x',
      '4,bad,not-an-address,y',
      '5,"quoted ""name""","carol@example.com",z',
      '6,empty,,w',
      '7,already,PRE@example.com,v',
    ].join('\r\n');
    await upload(imp, `${csv}\r\n`);
    // And the URL is used again with another file, which storage refuses as S3 refuses a conditional write
    const again = await fetch(imp.upload.url, { method: 'PUT', headers: imp.upload.headers, body: 'email\nother@example.com\n' });
    expect(again.status).toBe(412);
    expect(await again.text()).toContain('<Code>PreconditionFailed</Code>');
    // Then it completes with every row of the first file counted once
    const done = await ended(list.id, imp.id);
    expect(done).toEqual({ ...imp, status: 'completed', upload: null, row_count: 7, accepted_count: 3, rejected_count: 4 });
    // And the list holds exactly the accepted addresses, as written
    expect((await listEmails(list.id)).sort()).toEqual(['BOB@example.com', 'carol@example.com', 'jane@example.com', 'pre@example.com']);
    // And the credits went down by the accepted addresses, once
    await eventually(async () => (await credits()) === creditsBefore - 3, { what: 'three credits charged' });
    // And another list's path does not find the import
    const other = await newList();
    expect((await show(other.id, imp.id)).status).toBe(404);
    expect((await show(list.id, 'imp_00000000000000000000000000')).status).toBe(404);
    // And once the list is deleted, its import is gone for readers at once, as the list is
    expect((await api.call('DELETE', `/api/v1/emailList/${list.id}`, as())).status).toBe(200);
    const gone = await show(list.id, imp.id);
    expect(gone.status).toBe(404);
    expect(gone.body.error.param).toBe('id');
  });

  it('judges every row of a column headed email, even when none is an address: completed, each rejected', async () => {
    // Given a list, and a file whose email column holds no address
    const list = await newList();
    const imp = await createImport(list.id);
    // When it is imported
    await upload(imp, 'email\nfoo\nbar\n');
    // Then its rows were judged as addresses added to the list, and refused
    const done = await ended(list.id, imp.id);
    expect(done).toMatchObject({ status: 'completed', row_count: 2, accepted_count: 0, rejected_count: 2 });
    expect((await getList(list.id)).rejected_count).toBe(2);
  });

  it('takes a row with a long cell beside the address (a notes column of 200 KB)', async () => {
    // Given a list, and a file whose second row carries a long note
    const list = await newList();
    const imp = await createImport(list.id);
    // When it is imported
    await upload(imp, `email,notes\nlong@example.com,"${'note '.repeat(40_000)}"\nshort@example.com,x\n`);
    // Then both rows are added
    expect(await ended(list.id, imp.id)).toMatchObject({ status: 'completed', row_count: 2, accepted_count: 2 });
  });

  it.each([
    ['a binary file', () => randomBytes(4096), /not (valid UTF-8|text)/],
    ['a file with no address column', () => 'name,phone\nJane,123\nBob,456\n', /no column/],
    ['a file with a header and no rows', () => 'email\n', /no rows/],
    ['a file whose quotes never close', () => 'email\n"a@example.com\n', /not a valid CSV/],
    // csv-parse's only error whose code does not start with CSV_ (INVALID_OPENING_QUOTE): it once left the import retried forever
    ['a quote inside an unquoted field', () => 'email\na"b@example.com\n', /not a valid CSV/],
    ['a row longer than 1 MiB', () => `email,notes\na@example.com,${'x'.repeat(1024 * 1024)}\n`, /a row \(line 2\) is longer than 1 MiB/],
  ])('ends in error with the list unchanged for %s', async (_name, body, message) => {
    // Given a list with one address
    const list = await newList();
    await api.call('POST', `/api/v1/emailList/${list.id}/emails`, { ...as(), json: { emails: ['keep@example.com'] } });
    const before = await getList(list.id);
    // When the file is imported
    const imp = await createImport(list.id);
    await upload(imp, body());
    // Then the import ends in error with a message, and nothing was added
    const done = await ended(list.id, imp.id);
    expect(done.status).toBe('error');
    expect(done.error.message).toMatch(message);
    expect(done).toMatchObject({ accepted_count: 0, rejected_count: 0 });
    const after = await getList(list.id);
    expect({ email_count: after.email_count, rejected_count: after.rejected_count }).toEqual({
      email_count: before.email_count,
      rejected_count: before.rejected_count,
    });
  });

  it('resumes after a run stopped mid-file and a chunk added but not counted, adding and counting nothing twice', async () => {
    // Given a headerless file of two and a half chunks, 10 of its addresses repeated (and the credits it takes)
    const unique = 2 * CHUNK_ROWS + 40;
    await addCredits(t.accountId, unique);
    const list = await newList();
    const addresses = Array.from({ length: unique }, (_, i) => `user${i}@example.com`);
    const rows = [...addresses, ...addresses.slice(0, 10).map((a) => a.toUpperCase())];
    const imp = await createImport(list.id);
    await upload(imp, rows.join('\n'));
    const payload: ImportPayload = { listId: list.id, importId: imp.id };
    const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
    // When a worker claims the job and runs out of time after its first chunk
    const chain = randomUUID();
    const record = await claimJob(ref, chain);
    expect(record).toBeDefined();
    const job = { ...record!, kind: listImport.name, payload, chain };
    expect(await runJob(listImport, job, Date.now())).toBe('more'); // the first pass
    expect(await runJob(listImport, job, Date.now())).toBe('more'); // one chunk
    const stopped = (await getImport(t.accountId, list.id, imp.id))!;
    expect(stopped).toMatchObject({ status: 'importing', row_count: unique + 10, rows_done: CHUNK_ROWS, accepted_count: CHUNK_ROWS });
    // And the next chunk is added but the process dies before counting it
    await addChunk(stopped, CHUNK_ROWS, rows.slice(CHUNK_ROWS, 2 * CHUNK_ROWS));
    // When the dead chain's lease runs out and the purge worker takes the job up
    await timePasses(ref, LEASE_MS + 1_000);
    await purgeWorker(jobEvent({ kind: 'list-import', accountId: t.accountId, subject: ref.subject, chain: 'after-the-crash' }));
    // Then it completed with the same counts as one uninterrupted run
    const done = (await show(list.id, imp.id)).body;
    expect(done).toMatchObject({ status: 'completed', row_count: unique + 10, accepted_count: unique, rejected_count: 10 });
    expect((await getList(list.id)).email_count).toBe(unique);
    expect(await jobOf(ref)).toBeUndefined();
  });

  // Once: the transport only carries the reads.
  it.runIf(transport === 'http')(
    'ends in error, saying how far it got, when its job is given up after failing again and again',
    async () => {
      // Given an import that added its first chunk, then whose runs keep failing (the job worker gives up on it)
      const list = await newList();
      const imp = await createImport(list.id);
      await upload(imp, Array.from({ length: CHUNK_ROWS + 10 }, (_, i) => `given-up${i}@example.com`).join('\n'));
      const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
      const chain = randomUUID();
      const job = { ...(await claimJob(ref, chain))!, kind: listImport.name, payload: { listId: list.id, importId: imp.id }, chain };
      expect(await runJob(listImport, job, Date.now())).toBe('more'); // the first pass
      expect(await runJob(listImport, job, Date.now())).toBe('more'); // one chunk
      // When its kind is told the job is given up
      await listImport.giveUp!(job, new Error('the table kept refusing'));
      // Then the import is an error its owner sees, naming the rows that stay added, and its file is let go
      const ended = (await show(list.id, imp.id)).body;
      expect(ended.status).toBe('error');
      expect(ended.error.message).toContain(`after ${CHUNK_ROWS} rows`);
      expect((await getList(list.id)).email_count).toBe(CHUNK_ROWS);
    },
  );

  /** An import of `rows` whose job is claimed and has run its first pass and its first chunk, as a worker out of time would leave it. */
  async function importStoppedAfterOneChunk(rows: string[]) {
    const list = await newList();
    const imp = await createImport(list.id);
    await upload(imp, rows.join('\n'));
    const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
    const chain = randomUUID();
    const job = { ...(await claimJob(ref, chain))!, kind: listImport.name, payload: { listId: list.id, importId: imp.id }, chain };
    expect(await runJob(listImport, job, Date.now())).toBe('more'); // the first pass
    expect(await runJob(listImport, job, Date.now())).toBe('more'); // one chunk
    return { list, imp, job };
  }

  it.runIf(transport === 'http')(
    'keeps its list processing from start to end, so the list completes once, after the whole file',
    async () => {
      // Given an import of two and a half chunks stopped after its first, whose emails are then all validated
      await addCredits(t.accountId, 2 * CHUNK_ROWS + 10);
      const rows = Array.from({ length: 2 * CHUNK_ROWS + 10 }, (_, i) => `held${i}@example.com`);
      const { list, imp, job } = await importStoppedAfterOneChunk(rows);
      await eventually(async () => (await getEmailList(t.accountId, list.id))?.pending_count === 0, { what: 'the first chunk validated' });
      // Then the list is still processing: the rest of the file is to come
      expect((await getList(list.id)).status).toBe('processing');
      // When the import runs to its end and its emails are validated
      while ((await runJob(listImport, job, Date.now() + 60_000)) !== 'done');
      expect((await show(list.id, imp.id)).body.status).toBe('completed');
      // Then the list completes, holding every row, and no import holds it any more
      const done = await eventually(async () => ((await getList(list.id)).status === 'completed' ? getList(list.id) : undefined), {
        what: 'the list completed',
      });
      expect(done.email_count).toBe(rows.length);
      expect((await getEmailList(t.accountId, list.id))!.imports_running).toBe(0);
    },
  );

  it.runIf(transport === 'http')('ends in error, not importing for ever, when its file changes after a chunk', async () => {
    // Given an import stopped after its first chunk
    const rows = Array.from({ length: 2 * CHUNK_ROWS }, (_, i) => `replaced${i}@example.com`);
    const { list, imp, job } = await importStoppedAfterOneChunk(rows);
    // When its file is replaced by another (outside the upload URL, which writes once)
    await putObject(importObjectKey(t.accountId, imp.id), Buffer.from('email\nother@example.com\n'), 'text/csv');
    // Then the next run ends it in error, the rows of the first chunk staying added, and its list is no longer held
    expect(await runJob(listImport, job, Date.now() + 60_000)).toBe('done');
    const ended = (await show(list.id, imp.id)).body;
    expect(ended).toMatchObject({ status: 'error', accepted_count: CHUNK_ROWS });
    expect(ended.error.message).toContain('replaced or removed');
    expect((await getEmailList(t.accountId, list.id))!.imports_running).toBe(0);
  });

  it.runIf(transport === 'http')('ends in error when its file ends before the rows its first pass counted', async () => {
    // Given an import stopped after its first chunk, whose record counts 5 rows more than its file holds
    // (what a file changed under a storage that does not refuse a read of another version leaves)
    const rows = Array.from({ length: CHUNK_ROWS + 20 }, (_, i) => `short${i}@example.com`);
    const { list, imp, job } = await importStoppedAfterOneChunk(rows);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.listImport.key({ acct: t.accountId, list: String(list.id), imp: imp.id }),
        UpdateExpression: 'SET row_count = row_count + :more',
        ExpressionAttributeValues: { ':more': 5 },
      }),
    );
    // When it runs to the file's end
    expect(await runJob(listImport, job, Date.now() + 60_000)).toBe('done');
    // Then it ends in error saying how far it got, rather than staying importing
    const ended = (await show(list.id, imp.id)).body;
    expect(ended.status).toBe('error');
    expect(ended.error.message).toContain(`after ${rows.length} of its ${rows.length + 5} rows`);
    expect((await getEmailList(t.accountId, list.id))!.imports_running).toBe(0);
  });

  // Once, over HTTP: it waits out the 15 s before the job's first look, and the transport only carries the create.
  it.runIf(transport === 'http')('starts once the file is there, from the queue, with no GET and no sweeper pass', async () => {
    // Given an import created, and its file uploaded
    const list = await newList();
    const imp = await createImport(list.id);
    await upload(imp, 'early@example.com\nlate@example.com\n');
    // When nobody reads it (a GET would start it) and no sweeper runs
    // Then the job, queued for its first look at creation, finds the file and imports it
    const done = await eventually(
      async () => {
        const shown = (await api.call('GET', `/api/v1/emailList/${list.id}`, as())).body;
        return shown.email_count === 2 && shown;
      },
      { what: 'the file imported without a GET of the import', timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(done.email_count).toBe(2);
    // (the import records its end just after the rows are in; a GET now starts nothing, the job having started)
    const ended = await eventually(
      async () => {
        const shown = (await show(list.id, imp.id)).body;
        return shown.status === 'completed' && shown;
      },
      { what: 'the import completed' },
    );
    expect(ended).toMatchObject({ accepted_count: 2, rejected_count: 0 });
  });

  it('answers a create whose queue send fails, and the sweeper starts the import when due', async () => {
    // Given the purge queue unreachable (its URL unset, as for a function deployed without it)
    const list = await newList();
    const url = process.env.PURGE_QUEUE_URL;
    delete process.env.PURGE_QUEUE_URL;
    let imp: { id: string; upload: { url: string; method: string; headers: Record<string, string> } };
    try {
      // When an import is created
      imp = await createImport(list.id);
    } finally {
      process.env.PURGE_QUEUE_URL = url;
    }
    // Then it was answered (201 above), and once its file is there and it is due, the sweeper's pass starts it
    await upload(imp, 'swept@example.com\n');
    const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
    await timePasses(ref, 20_000);
    expect((await sweeper()).jobs).toBeGreaterThanOrEqual(1);
    const done = await eventually(async () => (await api.call('GET', `/api/v1/emailList/${list.id}`, as())).body.email_count === 1, {
      what: 'the swept import done',
    });
    expect(done).toBe(true);
  });

  // Once: it drives the job in-process.
  it.runIf(transport === 'handler')('starts at once when a GET finds the file, though the next look is queued for later', async () => {
    // Given an import whose job looked for its file before the upload, and queued its next look (15 s on)
    const list = await newList();
    const imp = await createImport(list.id);
    const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
    const record = await claimJob(ref, 'first-look');
    const job = { ...record!, kind: listImport.name, payload: { listId: list.id, importId: imp.id }, chain: 'first-look' };
    expect(await runJob(listImport, job, Date.now() + 60_000)).toBe('later');
    // When the file is uploaded and the client GETs the import
    await upload(imp, 'asked@example.com\n');
    expect((await show(list.id, imp.id)).body.status).toBe('importing');
    // Then it is imported well before that next look
    const done = await eventually(
      async () => {
        const shown = (await show(list.id, imp.id)).body;
        return shown.status === 'completed' && shown;
      },
      { what: 'the import started by the GET', timeoutMs: 8_000 },
    );
    expect(done).toMatchObject({ accepted_count: 1 });
  });

  // Once: it drives the job in-process, and waits out a hold.
  it.runIf(transport === 'handler')(
    'takes up a chunk a dead run held as soon as its hold ends, from the queue, with no sweeper pass',
    async () => {
      // Given a file of 150 addresses, judged by a first pass
      const list = await newList();
      const rows = Array.from({ length: 150 }, (_, i) => `held${i}@example.com`);
      const imp = await createImport(list.id);
      await upload(imp, rows.join('\n'));
      const ref = { accountId: t.accountId, subject: importSubject(imp.id) };
      const chain = randomUUID();
      const record = await claimJob(ref, chain);
      const job = { ...record!, kind: listImport.name, payload: { listId: list.id, importId: imp.id }, chain };
      expect(await runJob(listImport, job, Date.now())).toBe('more');
      // And a run that died holding the first chunk, its hold ending in 2 s
      const judged = (await getImport(t.accountId, list.id, imp.id))!;
      expect((await claimChunk(judged, 0, rows.slice(0, CHUNK_ROWS), 2)).kind).toBe('claimed');
      // When the job's next run finds the chunk held
      expect(await runJob(listImport, job, Date.now() + 60_000)).toBe('later');
      // And no other chain (the sweeper's, a late duplicate message) can start it beside the one queued for then
      expect(await claimJob(ref, 'a-late-duplicate')).toBeUndefined();
      // Then the queue's worker takes it up once the hold has ended (no sweeper runs here), well before the first look
      // queued at creation (15 s), and counts every row once
      const done = await eventually(
        async () => {
          const shown = (await show(list.id, imp.id)).body;
          return shown.status === 'completed' && shown;
        },
        { what: 'the import completed from the queue', timeoutMs: 8_000 },
      );
      expect(done).toMatchObject({ row_count: 150, accepted_count: 150, rejected_count: 0 });
      expect((await getList(list.id)).email_count).toBe(150);
    },
  );

  it('reads on from the recorded byte when storage closes the connection mid-file, adding every row once', async () => {
    // Given a file of three chunks' worth of addresses, uploaded (and the credits it takes)
    const count = 3 * CHUNK_ROWS;
    await addCredits(t.accountId, count);
    const list = await newList();
    const rows = Array.from({ length: count }, (_, i) => `"Row, ${i}",reader${i}@example.com`);
    const imp = await createImport(list.id);
    await upload(imp, `name,email\n${rows.join('\n')}\n`);
    // And storage reached through a connection that the first ranged read loses two chunks and a half in
    const cutAt = Buffer.byteLength(rows.slice(0, 2.5 * CHUNK_ROWS).join('\n'));
    const cutter = await cuttingProxy(new URL(process.env.AWS_ENDPOINT_URL_S3!), cutAt);
    const endpoint = process.env.AWS_ENDPOINT_URL_S3;
    process.env.AWS_ENDPOINT_URL_S3 = cutter.url;
    resetStorage();
    try {
      // When a worker runs the job
      const record = await claimJob({ accountId: t.accountId, subject: importSubject(imp.id) }, 'cut-read');
      expect(record).toBeDefined();
      const job = { ...record!, kind: listImport.name, payload: { listId: list.id, importId: imp.id }, chain: 'cut-read' };
      expect(await runJob(listImport, job, Date.now() + 60_000)).toBe('done');
    } finally {
      process.env.AWS_ENDPOINT_URL_S3 = endpoint;
      resetStorage();
      await cutter.stop();
    }
    // Then the read was cut once and opened again further on
    expect(cutter.cut).toBe(1);
    expect(cutter.ranges.length).toBeGreaterThanOrEqual(2);
    // And the import completed with every row added once
    expect((await show(list.id, imp.id)).body).toMatchObject({
      status: 'completed',
      row_count: count,
      accepted_count: count,
      rejected_count: 0,
    });
    expect((await getList(list.id)).email_count).toBe(count);
  });

  it('refuses a body with parameters and an unknown list', async () => {
    const list = await newList();
    const extra = await api.call('POST', `/api/v1/emailList/${list.id}/imports`, { ...as(), json: { name: 'x' } });
    expect(extra.status).toBe(400);
    expect((await api.call('POST', '/api/v1/emailList/999999999/imports', { ...as(), json: {} })).status).toBe(404);
    expect((await show(999999999, 'imp_00000000000000000000000000')).status).toBe(404);
  });
});
