import { batchPut } from '#shared/db/batch';
import { emailItem, type EmailRecord } from '#shared/data/emails';
import type { ValidationResult } from '#shared/email/result';
import { inParallel } from '#shared/util/parallel';

const DELIVERABILITY = ['deliverable', 'undeliverable', 'risky', 'unknown'] as const;

/** The i-th seeded email's result: the four deliverability values in turn, and flags that vary with it. */
const result = (i: number, address: string) =>
  ({
    is_valid: i % 4 !== 1,
    score: 40 + (i % 60),
    can_connect: true,
    mx_record_count: 2,
    connectable_mx_record_count: 2,
    is_username_generic: false,
    is_alias: i % 7 === 0,
    is_gov: false,
    is_edu: false,
    is_mil: false,
    is_free: i % 3 === 0,
    is_subdomain: false,
    canonical_email: address,
    is_disposable: false,
    did_you_mean: null,
    is_catch_all: i % 4 === 2,
    deliverability: DELIVERABILITY[i % 4]!,
  }) as Omit<ValidationResult, 'email'>;

/** The address of the i-th seeded email. */
export const seededAddress = (i: number) => `contact.${i}@example-${i % 97}.com`;

/**
 * `count` completed emails in the list, written as the worker leaves them
 * (each in the list's members index under sequence numbers 0…count-1), 25 a
 * BatchWriteItem, 8 at once: a large list in seconds, without the adds'
 * counting and validation (not what a bulk read is measured or tested on).
 * `firstId` keeps their numeric ids apart from the counter's.
 */
export async function seedListEmails(accountId: string, listId: number, count: number, firstId: number): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const batches: EmailRecord[][] = [];
  for (let start = 0; start < count; start += 25) {
    batches.push(
      Array.from({ length: Math.min(25, count - start) }, (_, k) => {
        const i = start + k;
        return {
          id: firstId + i,
          account_id: accountId,
          email: seededAddress(i),
          email_list_id: listId,
          status: 'completed',
          awaiting: false,
          seq: i,
          result: result(i, seededAddress(i)),
          created_at: now,
        } satisfies EmailRecord;
      }),
    );
  }
  await inParallel(batches, 8, (batch) => batchPut(batch.map(emailItem)));
}
