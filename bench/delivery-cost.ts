/**
 * What one send costs, in DynamoDB calls and capacity units, as the code
 * makes it (every call the document client sends during the send is asked
 * for `ReturnConsumedCapacity: TOTAL`): a one-to-one send, and a send to a
 * 1,000-member group, its fan-out included; then a reaction to each. Run
 * alone with `npx tsx bench/delivery-cost.ts`; `npm run bench` includes it.
 * docs/data-model.md quotes the figures.
 */
import { db } from '#shared/db/client';
import { openConversation } from '#shared/messaging/conversations';
import { getJob } from '#shared/data/jobs';
import { runJob } from '#shared/jobs/run';
import { fanout, messageSubject } from '#shared/messaging/fanout';
import { parseItem } from '#shared/db/item-schema';
import { sendMessage, updateMessage } from '#shared/messaging/messages';
import { startBackends, useBackends } from '../scripts/local/runtime.ts';
import { seedDemo } from '../scripts/local/seed.ts';
import { groupMembersOf } from '../test/steps/given.ts';

interface Cost {
  calls: Record<string, number>;
  read: number;
  write: number;
}

/** Runs `during`, counting the document client's calls and the capacity DynamoDB reports for them. */
async function measured(during: () => Promise<unknown>): Promise<Cost> {
  const cost: Cost = { calls: {}, read: 0, write: 0 };
  const name = `capacity-${Math.random()}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const command = String(context.commandName).replace(/Command$/, '');
      cost.calls[command] = (cost.calls[command] ?? 0) + 1;
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      for (const c of [consumed].flat() as { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number }[]) {
        if (!c) continue;
        cost.read += c.ReadCapacityUnits ?? (command.match(/Get|Query/) ? (c.CapacityUnits ?? 0) : 0);
        cost.write += c.WriteCapacityUnits ?? (command.match(/Get|Query/) ? 0 : (c.CapacityUnits ?? 0));
      }
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    await during();
    return cost;
  } finally {
    db().middlewareStack.remove(name);
  }
}

const show = (c: Cost) =>
  `${Object.values(c.calls).reduce((a, b) => a + b, 0)} calls (${Object.entries(c.calls)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}), ${c.write.toFixed(0)} WCU, ${c.read.toFixed(0)} RCU`;

export interface DeliveryCost {
  direct: Cost;
  group: Cost;
  groupSize: number;
  reaction: Cost;
}

export async function deliveryCost(groupSize = 1000): Promise<DeliveryCost> {
  const t = await seedDemo();
  const alice = { accountId: t.accountId, contactId: t.userContactId };
  await groupMembersOf(t, groupSize - 3, { tokens: false });
  const { conversation: withBob } = await openConversation(alice, { contact_id: t.contactIds.bob });
  const { conversation: group } = await openConversation(alice, { group_id: t.groupId });
  const direct = await measured(() => sendMessage(alice, { conversation_id: withBob.id, message: 'hello bob' }));
  let sentId = '';
  const groupCost = await measured(async () => {
    sentId = (await sendMessage(alice, { conversation_id: group.id, message: 'hello team' })).id;
    // What the request left is the delivery worker's: the same function, run to the end here by the request's chain.
    const job = (await getJob({ accountId: t.accountId, subject: messageSubject(sentId) }))!;
    if (job.pending) {
      await runJob(
        fanout,
        { ...job, kind: 'fanout', payload: parseItem(fanout.payload, job.payload), chain: job.holder! },
        Number.POSITIVE_INFINITY,
      );
    }
  });
  const reaction = await measured(() => updateMessage(alice, sentId, { reactions: { ok: [t.contactIds.bob!] } }));
  return { direct, group: groupCost, groupSize, reaction };
}

export const deliveryRows = (d: DeliveryCost) => [
  { what: 'One-to-one send (message, both entries, locators and conversations, the sender contact)', value: show(d.direct) },
  { what: `Send to a ${d.groupSize}-member group, its whole fan-out included`, value: show(d.group) },
  { what: `A reaction to that group message (stored once, seen by all ${d.groupSize})`, value: show(d.reaction) },
];

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.LOG_LEVEL = 'silent';
  const backends = await startBackends({ tableName: 'bench-delivery' });
  useBackends(backends.env);
  try {
    for (const row of deliveryRows(await deliveryCost())) console.log(`| ${row.what} | ${row.value} |`);
  } finally {
    await backends.stop();
  }
}
