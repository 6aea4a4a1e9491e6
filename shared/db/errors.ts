/** DynamoDB signals a failed condition by error name; transactions by cancellation reasons. */
export const isConditionFailure = (error: unknown): boolean => (error as Error)?.name === 'ConditionalCheckFailedException';

export function cancellationCodes(error: unknown): (string | undefined)[] | undefined {
  if ((error as Error)?.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.map((r) => r.Code);
}
