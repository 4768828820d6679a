import type { EmulatedUser } from '../../core/types.js';
import { stableGuid } from './ids.js';

/** The organisation (Entra ID tenant and SharePoint host) an emulated user belongs to. */
export interface MicrosoftTenant {
  id: string;
  /** Display name of the organisation, e.g. "Contoso". */
  name: string;
  /** SharePoint host, e.g. "contoso.sharepoint.com". */
  sharepointHost: string;
}

export interface MicrosoftUser extends EmulatedUser {
  givenName: string;
  surname: string;
  jobTitle: string;
  officeLocation: string;
  tenant: MicrosoftTenant;
}

function tenant(name: string): MicrosoftTenant {
  const label = name.toLowerCase();
  return { id: stableGuid(`tenant:${label}`), name, sharepointHost: `${label}.sharepoint.com` };
}

function user(
  givenName: string,
  surname: string,
  org: MicrosoftTenant,
  jobTitle: string,
  officeLocation: string,
): MicrosoftUser {
  const domain = org.sharepointHost.replace('.sharepoint.com', '.com');
  const email = `${givenName}.${surname}@${domain}`.toLowerCase();
  return {
    id: stableGuid(`user:${email}`),
    name: `${givenName} ${surname}`,
    email,
    givenName,
    surname,
    jobTitle,
    officeLocation,
    tenant: org,
  };
}

/**
 * Each user works in their own organisation, so each has their own sites and files; Ada's tenant
 * is the documentation's classic "Contoso".
 */
export const microsoftUsers: MicrosoftUser[] = [
  user('Ada', 'Lovelace', tenant('Contoso'), 'Analyst', '18/2111'),
  user('Grace', 'Hopper', tenant('Fabrikam'), 'Rear Admiral of Compilers', '2/1101'),
  user('Katherine', 'Johnson', tenant('Northwind'), 'Research Mathematician', '1/1244'),
];

export function findMicrosoftUser(id: string): MicrosoftUser | undefined {
  return microsoftUsers.find((u) => u.id === id);
}
