/**
 * The least a server can do for `GET /v1/messages?conversation_id=...&limit=10`
 * on the same DynamoDB Local, with the same class of calls as the handler: one
 * strongly consistent GetItem for the token, one Query of 12 items (the
 * conversation, the page's entries and one more, to know whether there is a
 * next page) and one strong BatchGetItem of the page's messages from their
 * thread, answered as JSON ids and texts. No validation, no authorizer,
 * no presentation: the yardstick the real handler's warm latency is divided by.
 *
 * `oneQuery`: the least for a layout whose entries carry their messages (no
 * BatchGetItem: the page is the Query), answered from the entries as read.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { hashToken } from '#shared/data/tokens';
import { db, tableName } from '#shared/db/client';
import { keys } from '#shared/db/keys';

export async function startIdealServer({ oneQuery = false } = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    // Read to the end first, as any server does: answering before the request is consumed stalls keep-alive.
    for await (const _ of req);
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const found = await db().send(
      new GetCommand({ TableName: tableName(), Key: keys.token.key({ token_hash: hashToken(token) }), ConsistentRead: true }),
    );
    if (!found.Item) {
      res.writeHead(401).end();
      return;
    }
    const owner = { accountId: found.Item.account_id as string, contactId: found.Item.contact_id as string };
    const conversationId = new URL(req.url ?? '/', 'http://x').searchParams.get('conversation_id') ?? '';
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': keys.conversation.partition({ acct: owner.accountId, user: owner.contactId, conv: conversationId }),
        },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: 12,
      }),
    );
    const entries = (page.Items ?? []).slice(1, 11);
    const contents =
      entries.length && !oneQuery
        ? await db().send(
            new BatchGetCommand({
              RequestItems: {
                [tableName()]: {
                  Keys: entries.map((e) =>
                    keys.threadMessage.key({ acct: owner.accountId, thread: e.thread as string, msg: e.id as string }),
                  ),
                  ConsistentRead: true,
                },
              },
            }),
          )
        : undefined;
    const data = (oneQuery ? entries : (contents?.Responses?.[tableName()] ?? [])).map((item) => ({ id: item.id, message: item.message }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ has_more: true, data }));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((done) => server.close(() => done())),
  };
}
