import type { EmailRecord } from '#shared/data/emails';
import type { Entry } from '#shared/email/batch';
import { listStatus, type EmailList } from '#shared/data/email-lists';

/**
 * The public email object. Until an email is completed its DNS-derived
 * fields read false / 0, its canonical form is the address itself, and
 * `score` is absent (docs/openapi.yaml: no score before completion).
 */
export function presentEmail(e: EmailRecord) {
  const r = e.result;
  return {
    id: e.id,
    email: e.email,
    ...(e.email_list_id === null ? {} : { email_list_id: e.email_list_id }),
    is_valid: r?.is_valid ?? false,
    ...(e.status === 'completed' && r ? { score: r.score } : {}),
    can_connect: r?.can_connect ?? false,
    mx_record_count: r?.mx_record_count ?? 0,
    connectable_mx_record_count: r?.connectable_mx_record_count ?? 0,
    is_username_generic: r?.is_username_generic ?? false,
    is_alias: r?.is_alias ?? false,
    is_gov: r?.is_gov ?? false,
    is_edu: r?.is_edu ?? false,
    is_mil: r?.is_mil ?? false,
    is_free: r?.is_free ?? false,
    is_subdomain: r?.is_subdomain ?? false,
    canonical_email: r?.canonical_email ?? e.email,
    is_disposable: r?.is_disposable ?? false,
    did_you_mean: r?.did_you_mean ?? null,
    is_catch_all: r?.is_catch_all ?? null,
    deliverability: r?.deliverability ?? 'unknown',
    status: e.status,
  };
}

export const presentEmailList = (l: EmailList) => ({
  id: l.id,
  name: l.name,
  description: l.description,
  email_count: l.email_count,
  rejected_count: l.rejected_count,
  status: listStatus(l),
  progress: listProgress(l),
});

/** A batch's entry: the email object, or the rejected entry as it is. */
export const presentEntry = (entry: Entry) => ('error' in entry ? entry : presentEmail(entry));

/**
 * The list's emails by where they stand, from the counters kept with them:
 * `pending` (waiting for or under validation), `insufficient_credits` (held
 * until credits are added) and `finished` (completed or error); the three
 * add up to `email_count`.
 */
export function listProgress(l: EmailList) {
  const pending = Math.max(0, l.pending_count);
  const held = Math.max(0, l.awaiting_count);
  return { pending, insufficient_credits: held, finished: Math.max(0, l.email_count - pending - held) };
}
