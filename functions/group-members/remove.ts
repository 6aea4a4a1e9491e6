import { platformEndpoint } from '#shared/http/messaging';
import { groupId, memberId, pathPair } from '#shared/http/path-ids';
import { presentGroup, removeGroupMember } from '#shared/platform/groups';

export const handler = platformEndpoint({ path: pathPair(groupId, memberId) }, async ({ caller, id: [group, contact] }) => ({
  body: presentGroup(await removeGroupMember(caller, group, contact)),
}));
