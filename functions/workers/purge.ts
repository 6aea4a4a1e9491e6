import { listImport } from '#shared/email/list-import';
import { listExport } from '#shared/email/export-job';
import { fileRelease } from '#shared/files/release';
import { jobWorker } from '#shared/jobs/worker';
import { purgeContact } from '#shared/purge/contact';
import { purgeConversation } from '#shared/purge/conversation';
import { purgeGroup } from '#shared/purge/group';
import { purgeList } from '#shared/purge/list';

/**
 * Continues deleting what a deleted conversation, email list, contact or
 * group left, and files no message attaches, and runs CSV imports into
 * lists and writes their exports (long, bounded, resumable: the same shape
 * of work); a job out of time queues the rest.
 */
export const handler = jobWorker([purgeConversation, purgeList, purgeContact, purgeGroup, fileRelease, listImport, listExport]);
