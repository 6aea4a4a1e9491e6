import { platformEndpoint } from '#shared/http/messaging';
import { groupId } from '#shared/http/path-ids';
import { updateGroupBody } from '#shared/http/platform-schemas';
import { presentGroup, renameGroup } from '#shared/platform/groups';

export const handler = platformEndpoint({ path: groupId, body: updateGroupBody }, async ({ caller, id, body }) => ({
  body: presentGroup(await renameGroup(caller, id, body.name)),
}));
