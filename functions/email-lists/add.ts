import { emailEndpoint } from '#shared/http/email';
import { addToList } from '#shared/email/add-to-list';
import { presentEmailList, presentEntry } from '#shared/email/present';
import { emailsBody } from '#shared/http/email-schemas';
import { emailListId } from '#shared/http/path-ids';
import { idempotent } from '#shared/http/idempotency';

export const handler = emailEndpoint(
  { path: emailListId, body: emailsBody, entryLists: ['emails'], idempotent: idempotent() },
  async ({ caller, id, body, idempotency }) => {
    const { list, entries } = await addToList(caller, id, body.emails, idempotency);
    return { status: 201, body: { emailList: presentEmailList(list), emails: entries.map(presentEntry) } };
  },
);
