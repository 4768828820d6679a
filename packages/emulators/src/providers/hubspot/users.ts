import type { EmulatedUser } from '../../core/types.js';

/**
 * The people who can sign in to the emulated HubSpot. At HubSpot a user installs an app into one
 * portal (hub); here each user owns exactly one portal with its own CRM data. Ids are numeric like
 * HubSpot's user ids and never change, so tests and docs can name them.
 */
export const hubspotUsers: EmulatedUser[] = [
  { id: '71000001', name: 'Ada Lovelace', email: 'ada.lovelace@example.com' },
  { id: '71000002', name: 'Grace Hopper', email: 'grace.hopper@example.com' },
  { id: '71000003', name: 'Alan Turing', email: 'alan.turing@example.com' },
];

/** The portal (HubSpot account) behind each user: what token-info endpoints report as hub_id / hub_domain. */
export interface PortalIdentity {
  hubId: number;
  hubDomain: string;
  companyName: string;
}

export const portalIdentities: Record<string, PortalIdentity> = {
  '71000001': {
    hubId: 24000001,
    hubDomain: 'analytical-engines.example.com',
    companyName: 'Analytical Engines',
  },
  '71000002': { hubId: 24000002, hubDomain: 'compiler-works.example.com', companyName: 'Compiler Works' },
  '71000003': {
    hubId: 24000003,
    hubDomain: 'bletchley-analytics.example.com',
    companyName: 'Bletchley Analytics',
  },
};

export function portalIdentityOf(userId: string): PortalIdentity {
  const identity = portalIdentities[userId];
  if (!identity) throw new Error(`no HubSpot portal for user ${userId}`);
  return identity;
}
