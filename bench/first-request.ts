/**
 * A cold start as a client sees it: the bundle's import plus its first
 * request, in a fresh process, against the floor bundle importing the SDK and
 * making the same single read. The function is `GET /v1/conversations/{id}`
 * invoked as API Gateway would after the authorizer (its context in the
 * event), so it reads one item, the conversation, from DynamoDB Local; the
 * floor reads the same item with a bare document client. CPU time of the
 * whole, as for the imports (bench/cold-start.ts).
 */
import { dispatch } from '../scripts/local/api-gateway.ts';
import { startBackends, useBackends } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';

/** The route measured: one table read once the authorizer has run. */
export const FIRST_REQUEST_FUNCTION = 'ConversationsGetFn';

export interface FirstRequestSetup {
  /** The environment both processes get: the table and DynamoDB Local. */
  env: Record<string, string>;
  /** The function's script: import, first request, its CPU time on stdout. */
  functionScript: (file: string) => string;
  /** The floor's script: import, the same GetItem, its CPU time on stdout. */
  floorScript: (file: string) => string;
  stop: () => Promise<void>;
}

export async function firstRequestSetup(): Promise<FirstRequestSetup> {
  const backends = await startBackends();
  try {
    useBackends(backends.env);
    const demo = await seedDemo();
    // Made through the API, so the bench depends on no data module's shape.
    const created = await dispatch('messaging', {
      method: 'POST',
      url: '/v1/conversations',
      headers: { authorization: `Bearer ${demo.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `contact_id=${demo.contactIds.bob}`,
    });
    if (created.statusCode !== 201) throw new Error(`could not open the bench's conversation: ${created.statusCode} ${created.body}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    // The one item the route reads, found by its id as the handler finds it.
    const path = `/v1/conversations/${id}`;
    const event = {
      resource: '/v1/conversations/{id}',
      path,
      httpMethod: 'GET',
      headers: {},
      multiValueHeaders: {},
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { id },
      stageVariables: null,
      body: null,
      isBase64Encoded: false,
      requestContext: {
        requestId: 'bench',
        resourcePath: '/v1/conversations/{id}',
        httpMethod: 'GET',
        path: `/prod${path}`,
        stage: 'prod',
        identity: { sourceIp: '127.0.0.1' },
        authorizer: { accountId: demo.accountId, contactId: demo.userContactId, principalId: demo.userContactId },
      },
    };
    const context =
      '{callbackWaitsForEmptyEventLoop:false,functionName:"bench",functionVersion:"$LATEST",invokedFunctionArn:"arn:aws:lambda:local:000000000000:function:bench",' +
      'memoryLimitInMB:"256",awsRequestId:"bench",logGroupName:"/aws/lambda/bench",logStreamName:"bench",getRemainingTimeInMillis:()=>10000}';
    const key = await conversationKey(backends.env, id);
    const check = (what: string) => `if(${what})throw new Error("first request failed: "+JSON.stringify(r));`;
    return {
      env: { ...backends.env, LOG_LEVEL: 'silent', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      functionScript: (file) =>
        `const c=process.cpuUsage();const m=await import(${JSON.stringify(file)});` +
        `const r=await m.handler(${JSON.stringify(event)},${context});const d=process.cpuUsage(c);` +
        `${check('r.statusCode!==200')}console.log((d.user+d.system)/1e3)`,
      floorScript: (file) =>
        `const c=process.cpuUsage();const m=await import(${JSON.stringify(file)});` +
        `const db=m.DynamoDBDocumentClient.from(new m.DynamoDBClient({}));` +
        `const r=await db.send(new m.GetCommand({TableName:process.env.TABLE_NAME,Key:${JSON.stringify(key)},ConsistentRead:true}));` +
        `const d=process.cpuUsage(c);${check('!r.Item')}console.log((d.user+d.system)/1e3)`,
      stop: backends.stop,
    };
  } catch (error) {
    await backends.stop();
    throw error;
  }
}

/** The conversation's table key, found by scanning the small bench table for its id (no key design duplicated here). */
async function conversationKey(env: Record<string, string>, id: string): Promise<{ pk: string; sk: string }> {
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDBDocumentClient, ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
  try {
    const out = await db.send(
      new ScanCommand({
        TableName: env.TABLE_NAME,
        FilterExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': id },
      }),
    );
    const item = out.Items?.find((i) => typeof i.pk === 'string' && typeof i.sk === 'string');
    if (!item) throw new Error(`conversation ${id} not found in the bench table`);
    return { pk: item.pk as string, sk: item.sk as string };
  } finally {
    db.destroy();
  }
}
