import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AuditService } from '../../audit/service.js';
import { escapeHtml, renderHtmlPage } from '../../authorization/pages.js';
import { Problem } from '../../errors/problem.js';
import { APPROVAL_LINK_PREFIX } from '../../guardrails/approval-links.js';
import type { ApprovalView, GuardrailService } from '../../guardrails/service.js';
import { originOf } from '../audit.js';
import { contentSecurityPolicy, pageHeaders } from '../page-headers.js';

/** The decision form posts to the link itself and nowhere else. */
const DECISION_PAGE_POLICY = contentSecurityPolicy(
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "form-action 'self'",
);

const MAX_REASON = 500;

/**
 * The page behind an approval's one-time link (sent with the approval.requested webhook). Opening
 * it (GET, HEAD: what chat previews and mail scanners do) decides nothing; its buttons POST, and
 * only a pending approval can be decided, once. The link is the approver's credential: no session.
 */
export async function approvalLinkRoutes(
  app: FastifyInstance,
  opts: { guardrails: GuardrailService; audit: AuditService },
): Promise<void> {
  const { guardrails, audit } = opts;
  const send = (reply: FastifyReply, status: number, html: string) =>
    reply
      .code(status)
      .header('cache-control', 'no-store')
      .headers(pageHeaders(DECISION_PAGE_POLICY))
      .type('text/html; charset=utf-8')
      .send(html);
  const failure = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof Problem)) throw error;
    return send(
      reply,
      error.status,
      renderHtmlPage(
        'This approval cannot be decided',
        `<h1 id="title">This approval cannot be decided</h1><p id="message">${escapeHtml(error.detail)}</p><p>Error code: <code>${escapeHtml(error.code)}</code></p>`,
        'error',
        error.code,
      ),
    );
  };

  app.get<{ Params: { token: string } }>(`${APPROVAL_LINK_PREFIX}:token`, async (req, reply) => {
    try {
      return send(reply, 200, decisionPage(await guardrails.approvalForLink(req.params.token)));
    } catch (error) {
      return failure(reply, error);
    }
  });

  app.post<{ Params: { token: string }; Body: unknown }>(
    `${APPROVAL_LINK_PREFIX}:token`,
    async (req, reply) => {
      try {
        const body = (req.body ?? {}) as Record<string, unknown>;
        const decision = body.decision;
        if (decision !== 'approve' && decision !== 'deny') {
          throw new Problem('invalid_input', 'Choose approve or deny with the buttons of the page.', {
            errors: [{ path: '/decision', message: 'must be approve or deny' }],
          });
        }
        const reason = typeof body.reason === 'string' ? body.reason.trim().slice(0, MAX_REASON) : '';
        const { approval: decided, environmentId } = await guardrails.decideByLink(
          req.params.token,
          decision,
          reason || undefined,
        );
        // The link is the approver's credential: recorded by the approval it names, never the token.
        audit.record({
          environmentId,
          actorType: 'link',
          actorId: decided.id,
          credential: 'approval link',
          action: decided.status === 'approved' ? 'approval.approved' : 'approval.denied',
          resourceType: 'approval',
          resourceId: decided.id,
          statusCode: 200,
          details: {
            tool_name: decided.tool_name,
            identifier: decided.identifier,
            ...(reason ? { reason } : {}),
          },
          ...originOf(req),
        });
        const verb = decided.status === 'approved' ? 'approved' : 'denied';
        return send(
          reply,
          200,
          renderHtmlPage(
            `Call ${verb}`,
            `<h1 id="title">Call ${verb}</h1><p id="message">${escapeHtml(decided.tool_name)} for ${escapeHtml(decided.identifier)} is ${verb}.${decided.status === 'approved' ? ' The agent can now run it once, with the input shown before.' : ' It will not run.'}</p>`,
            'success',
          ),
        );
      } catch (error) {
        return failure(reply, error);
      }
    },
  );
}

function decisionPage(approval: ApprovalView): string {
  const facts: Array<[string, string]> = [
    ['Tool', approval.tool_name],
    ['Connection', approval.connection_name],
    ['End user', approval.identifier],
    ['Policy', approval.policy],
    ['Requested by', approval.requested_by],
    ['Expires', new Date(approval.expires_at).toUTCString()],
  ];
  const list = facts.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('');
  const input = `<pre id="input" style="white-space:pre-wrap;overflow-wrap:anywhere;background:#f0f1f4;padding:.75rem;border-radius:6px">${escapeHtml(JSON.stringify(approval.tool_input, null, 2))}</pre>`;
  if (approval.status !== 'pending') {
    return renderHtmlPage(
      `Approval ${approval.status}`,
      `<h1 id="title">This call is already ${escapeHtml(approval.status)}</h1><p id="message">${approval.decided_by ? `Decided by ${escapeHtml(approval.decided_by)}. ` : ''}Nothing is left to decide.</p><dl>${list}</dl>${input}`,
      'decided',
      approval.status,
    );
  }
  return renderHtmlPage(
    `Approve ${approval.tool_name}?`,
    `<h1 id="title">Approve ${escapeHtml(approval.tool_name)}?</h1>
<p id="message">An agent asks to run this call. Approved, it runs once, with exactly this input.</p>
<dl>${list}</dl>
${input}
<form method="post">
<label for="reason">Reason (optional)</label>
<input id="reason" name="reason" maxlength="${MAX_REASON}">
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="deny" id="deny" style="background:#b42318">Deny</button>
</form>`,
    'pending',
  );
}
