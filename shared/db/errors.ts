import { unmarshall } from '@aws-sdk/util-dynamodb';
/** DynamoDB signals a failed condition by error name; transactions by cancellation reasons. */
export const isConditionFailure = (error: unknown): boolean => (error as Error)?.name === 'ConditionalCheckFailedException';

export function cancellationCodes(error: unknown): (string | undefined)[] | undefined {
  if ((error as Error)?.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((r) => r.Code);
}

/** The item a failed conditional write found (asked for with `oldOnFailure`), when DynamoDB returned it. */
export const oldItemOf = (error: unknown): Record<string, unknown> | undefined => {
  const item = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
  return item ? unmarshall(item) : undefined;
};
