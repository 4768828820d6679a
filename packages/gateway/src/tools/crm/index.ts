import type { AnyTool } from '../types.js';
import { crmCompanyCreate, crmCompanyGet } from './companies.js';
import { crmContactCreate, crmContactGet, crmContactsList, crmContactUpdate } from './contacts.js';
import { crmDealCreate, crmDealUpdate } from './deals.js';
import { crmCompaniesSearch, crmContactsSearch, crmDealsSearch } from './search.js';

/** The `crm_` tools (HubSpot CRM v3). */
export const crmTools: AnyTool[] = [
  crmCompaniesSearch,
  crmContactsSearch,
  crmDealsSearch,
  crmCompanyCreate,
  crmCompanyGet,
  crmContactCreate,
  crmContactGet,
  crmContactUpdate,
  crmContactsList,
  crmDealCreate,
  crmDealUpdate,
] as AnyTool[];
