import { listExport } from '#shared/email/export-job';
import { fileRelease } from '#shared/files/release';
import { jobWorker } from '#shared/jobs/worker';
import { purgeContact } from '#shared/purge/contact';
import { purgeConversation } from '#shared/purge/conversation';
import { purgeGroup } from '#shared/purge/group';
import { purgeList } from '#shared/purge/list';

/**
 * Continues deleting what a deleted conversation, email list, contact or group left, and files no message attaches,
 * and writing a list's CSV export; a job out of time queues the rest.
 */
export const handler = jobWorker([purgeConversation, purgeList, purgeContact, purgeGroup, fileRelease, listExport]);
