import { AUDIT_LOG_DEFAULT_PAGE, AUDIT_LOG_MAX_ENTRIES } from '../../services/index.js';
import { intParam } from '../params.js';
import { arr, int, obj, str } from '../schema.js';
import type { RouteDef } from '../types.js';

const auditEntry = obj({
  seq: int('increasing, never reused (also across restarts)'),
  time: int('Unix seconds'),
  kind: str(undefined, { enum: ['config', 'auth_failure', 'admin_action'] }),
  detail: obj(
    {},
    { description: 'config: the effective configuration, secrets redacted; auth_failure: ip, method, path, reason' },
  ),
});

/** GET /admin/log: the audit log, newest first. */
export const adminRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/admin/log',
    auth: true,
    admin: true,
    tag: 'admin',
    summary: 'Audit log: configuration at start, authentication failures, admin actions (newest first)',
    description: `Rolling ${AUDIT_LOG_MAX_ENTRIES} entries, persisted across restarts. Key-checked when NATIVE_API_KEY is set.`,
    query: {
      limit: int(`entries, default ${AUDIT_LOG_DEFAULT_PAGE}, at most ${AUDIT_LOG_MAX_ENTRIES} (larger values are clamped)`),
      offset: int('newest entries to skip, default 0'),
    },
    response: obj({ entries: arr(auditEntry), total: int('entries held (at most the rolling size)') }),
    handler: async (ctx, req) => {
      const audit = ctx.audit;
      if (!audit) return { status: 404 };
      const limit = intParam(req.query, 'limit', AUDIT_LOG_DEFAULT_PAGE, audit.maxEntries);
      const offset = intParam(req.query, 'offset', 0, audit.maxEntries);
      return { body: await audit.list(limit, offset) };
    },
  },
];
