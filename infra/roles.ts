import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { FileAccess, QueueName, TableAccess } from '../shared/routes.ts';

/** What a function may do besides writing its own logs: the grants its route-table row declares. */
export interface GrantProfile {
  table?: TableAccess;
  sends?: readonly QueueName[];
  decrypts?: boolean;
  /** Seals secrets (kms:Encrypt on the webhook key) and opens its idempotent replays' (kms:Decrypt of the replay context). */
  seals?: boolean;
  /** Posts to the realtime API's connections; the caller grants it once the stage exists. */
  manages?: boolean;
  /** What it does with the files bucket's objects. */
  files?: readonly FileAccess[];
}

/**
 * A role's inline policy may hold 10,240 characters: each member's log group
 * ARN takes about 120, so a role stops taking members well before that
 * (docs/deploying.md, "Function roles and the resource budget").
 */
export const MAX_FUNCTIONS_PER_ROLE = 40;

/**
 * One IAM role per grant profile. Every role is counted against the stack's
 * 500-resource limit twice (the role and its policy), so the API functions
 * whose rows grant the same things share one, allowed to write to exactly the
 * log groups of the functions that use it. A function whose event source or
 * failure destination adds grants of its own (a worker's queue, a stream, a
 * schedule's failure queue) keeps a role of its own: those grants must not
 * reach anyone else.
 */
export class FunctionRoles {
  private readonly shared = new Map<string, { role: Role; members: number }[]>();

  constructor(private readonly scope: Construct) {}

  /** The role for a function with these grants; `ownId` gives it a role of its own, under that construct id. */
  roleFor(profile: GrantProfile, ownId?: string): Role {
    if (ownId !== undefined) return this.newRole(`${ownId}Role`);
    const name = profileName(profile);
    const roles = this.shared.get(name) ?? [];
    this.shared.set(name, roles);
    let current = roles.at(-1);
    if (!current || current.members === MAX_FUNCTIONS_PER_ROLE) {
      current = { role: this.newRole(`${name}FunctionRole${roles.length ? roles.length + 1 : ''}`), members: 0 };
      roles.push(current);
    }
    current.members++;
    return current.role;
  }

  private newRole(id: string): Role {
    return new Role(this.scope, id, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  }
}

/** A readable construct id that equal profiles share: `ReadWriteSendsPurge`, `NoTable`, ... */
export function profileName(profile: GrantProfile): string {
  const table = profile.table === 'read' ? 'Read' : profile.table === 'readWrite' ? 'ReadWrite' : 'NoTable';
  const sends = [...new Set(profile.sends ?? [])].sort();
  return [
    table,
    sends.length ? `Sends${sends.map((q) => q[0]!.toUpperCase() + q.slice(1)).join('')}` : '',
    profile.decrypts ? 'Decrypts' : '',
    profile.seals ? 'Seals' : '',
    profile.manages ? 'Manages' : '',
    fileAccess(profile.files).length
      ? `Files${fileAccess(profile.files)
          .map((a) => a[0]!.toUpperCase() + a.slice(1))
          .join('')}`
      : '',
  ].join('');
}

const FILE_ACCESS_ORDER: readonly FileAccess[] = ['read', 'write', 'delete'];

/** A row's file access, each once and in one order, so that equal grants make equal profiles. */
export const fileAccess = (files: readonly FileAccess[] | undefined): FileAccess[] => FILE_ACCESS_ORDER.filter((a) => files?.includes(a));
