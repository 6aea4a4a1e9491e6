import type { SQSEvent } from 'aws-lambda';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getJob, type JobRecord } from '#shared/data/jobs';
import { db, tableName } from '#shared/db/client';
import { getItem } from '#shared/db/items';
import { keys } from '#shared/db/keys';
import type { JobMessage } from '#shared/jobs/run';

type Ref = Pick<JobRecord, 'accountId' | 'subject'>;

/** A job's record, read strongly; undefined once it is gone. */
export const jobOf = (ref: Ref) => getJob(ref);

/**
 * `ms` pass for a job on record: it started that much earlier, and its
 * lease (or the time it is due again) ends that much sooner. Stands in for
 * waiting out a dead process's lease, and a purge's settle time.
 */
export async function timePasses(ref: Ref, ms: number): Promise<void> {
  const key = keys.job.key({ acct: ref.accountId, subject: ref.subject });
  const item = await getItem(key, true);
  if (!item) throw new Error(`no job ${ref.subject} on record`);
  const due = Number(item.gsi2sk) - ms;
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET created_at_ms = :created, gsi2sk = :due${item.lease_until === undefined ? '' : ', lease_until = :until'}`,
      ExpressionAttributeValues: {
        ':created': Number(item.created_at_ms) - ms,
        ':due': keys.pendingJobs.sortKey({ ms: due }),
        ...(item.lease_until === undefined ? {} : { ':until': Number(item.lease_until) - ms }),
      },
    }),
  );
}

/** An SQS event carrying these job messages, as the job workers receive it. */
export const jobEvent = (...messages: JobMessage[]): SQSEvent => ({
  Records: messages.map(
    (m, i) =>
      ({
        messageId: `m${i}`,
        body: JSON.stringify(m),
        attributes: { ApproximateReceiveCount: '1' },
      }) as unknown as SQSEvent['Records'][number],
  ),
});
