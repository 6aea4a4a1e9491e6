import { platformEndpoint } from '#shared/http/messaging';
import { groupId } from '#shared/http/path-ids';
import { presentGroup, requireGroup } from '#shared/platform/groups';

export const handler = platformEndpoint({ path: groupId }, async ({ caller, id }) => ({
  body: presentGroup(await requireGroup(caller, id)),
}));
