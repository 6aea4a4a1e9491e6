import { platformEndpoint } from '#shared/http/messaging';
import { groupId } from '#shared/http/path-ids';
import { addMemberBody } from '#shared/http/platform-schemas';
import { addGroupMember, presentGroup } from '#shared/platform/groups';

export const handler = platformEndpoint({ path: groupId, body: addMemberBody }, async ({ caller, id, body }) => ({
  body: presentGroup(await addGroupMember(caller, id, body.contact_id)),
}));
