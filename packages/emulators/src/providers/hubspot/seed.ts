import type { EmulatedUser } from '../../core/types.js';
import type { ObjectTypeName } from './schema.js';
import {
  allocateId,
  associate,
  type CrmRecord,
  type Owner,
  type Portal,
  stampSystemProperties,
} from './store.js';
import { portalIdentityOf } from './users.js';

/**
 * Demo CRM data, one data set per portal. Everything is derived from fixed tables and fixed dates,
 * so a reset always yields the same ids and values (ids start at 100001, 200001, 300001 per portal).
 */

type CompanySeed = [
  name: string,
  domain: string,
  industry: string,
  city: string,
  country: string,
  employees: number,
];
type ContactSeed = [
  first: string,
  last: string,
  company: number,
  jobtitle: string,
  leadStatus: string,
  stage: string,
];
type DealSeed = [
  name: string,
  amount: number,
  stage: string,
  closeDate: string,
  priority: string,
  company: number,
  contact: number,
];

interface PortalSeed {
  colleagues: Array<[first: string, last: string, email: string]>;
  team: string;
  companies: CompanySeed[];
  contacts: ContactSeed[];
  deals: DealSeed[];
}

const SEEDS: PortalSeed[] = [
  {
    colleagues: [
      ['Charles', 'Babbage', 'charles.babbage@example.com'],
      ['Mary', 'Somerville', 'mary.somerville@example.com'],
    ],
    team: 'Difference Engine Sales',
    companies: [
      ['Jacquard Looms', 'jacquard-looms.example', 'TEXTILES', 'Lyon', 'France', 120],
      ['Royal Astronomical Society', 'ras.example', 'RESEARCH', 'London', 'United Kingdom', 45],
      [
        'Babbage & Sons Engineering',
        'babbage-engineering.example',
        'MACHINERY',
        'London',
        'United Kingdom',
        80,
      ],
      ['Menabrea Publishing', 'menabrea.example', 'EDUCATION_MANAGEMENT', 'Turin', 'Italy', 30],
      [
        'Bernoulli Numbers Ltd',
        'bernoulli-numbers.example',
        'FINANCIAL_SERVICES',
        'Basel',
        'Switzerland',
        15,
      ],
      ['Ockham Estates', 'ockham-estates.example', 'ACCOUNTING', 'Surrey', 'United Kingdom', 25],
      [
        'Wheatstone Telegraph Co',
        'wheatstone.example',
        'TELECOMMUNICATIONS',
        'London',
        'United Kingdom',
        300,
      ],
      [
        'De Morgan Logic Works',
        'demorgan-logic.example',
        'COMPUTER_SOFTWARE',
        'Cambridge',
        'United Kingdom',
        60,
      ],
    ],
    contacts: [
      ['Joseph', 'Jacquard', 0, 'Founder', 'CONNECTED', 'customer'],
      ['John', 'Herschel', 1, 'President', 'OPEN_DEAL', 'opportunity'],
      ['Henry', 'Babbage', 2, 'Chief Engineer', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['Luigi', 'Menabrea', 3, 'Editor', 'OPEN', 'lead'],
      ['Jakob', 'Bernoulli', 4, 'Chief Actuary', 'NEW', 'lead'],
      ['William', 'King', 5, 'Estate Manager', 'ATTEMPTED_TO_CONTACT', 'lead'],
      ['Charles', 'Wheatstone', 6, 'CTO', 'OPEN_DEAL', 'opportunity'],
      ['Augustus', 'De Morgan', 7, 'Head of Research', 'CONNECTED', 'customer'],
      ['Michael', 'Faraday', 1, 'Fellow', 'BAD_TIMING', 'marketingqualifiedlead'],
      ['Andrew', 'Crosse', 6, 'Electrical Engineer', 'UNQUALIFIED', 'other'],
      ['Sophia', 'De Morgan', 7, 'Operations Director', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['David', 'Brewster', 1, 'Secretary', 'NEW', 'subscriber'],
      ['Isambard', 'Brunel', 2, 'Consulting Engineer', 'OPEN', 'lead'],
      ['Caroline', 'Herschel', 1, 'Astronomer', 'ATTEMPTED_TO_CONTACT', 'marketingqualifiedlead'],
      ['Anne', 'Isabella', 5, 'Trustee', 'CONNECTED', 'customer'],
    ],
    deals: [
      ['Jacquard punch-card licence', 48000, 'closedwon', '2025-02-28', 'high', 0, 0],
      ['Astronomical tables engine', 125000, 'contractsent', '2025-06-30', 'high', 1, 1],
      ['Engine maintenance contract', 18500, 'qualifiedtobuy', '2025-07-15', 'medium', 2, 2],
      ['Translation notes reprint', 6200, 'appointmentscheduled', '2025-08-01', 'low', 3, 3],
      ['Telegraph cipher module', 72000, 'presentationscheduled', '2025-09-30', 'medium', 6, 6],
      ['Logic engine pilot', 30000, 'closedlost', '2025-03-31', 'low', 7, 7],
    ],
  },
  {
    colleagues: [
      ['Jean', 'Sammet', 'jean.sammet@example.com'],
      ['Howard', 'Aiken', 'howard.aiken@example.com'],
    ],
    team: 'Compiler Sales',
    companies: [
      [
        'Harvard Computation Lab',
        'harvard-computation.example',
        'HIGHER_EDUCATION',
        'Cambridge',
        'United States',
        200,
      ],
      ['Remington Rand', 'remington-rand.example', 'COMPUTER_HARDWARE', 'New York', 'United States', 5000],
      [
        'Eckert-Mauchly Computer Corp',
        'eckert-mauchly.example',
        'COMPUTER_HARDWARE',
        'Philadelphia',
        'United States',
        150,
      ],
      ['Naval Data Automation', 'navy-data.example', 'DEFENSE_SPACE', 'Washington', 'United States', 900],
      [
        'CODASYL Committee',
        'codasyl.example',
        'INFORMATION_TECHNOLOGY_AND_SERVICES',
        'Washington',
        'United States',
        40,
      ],
      ['Burroughs Business Machines', 'burroughs.example', 'MACHINERY', 'Detroit', 'United States', 3000],
      ['Sperry Gyroscope', 'sperry.example', 'AIRLINES_AVIATION', 'Brooklyn', 'United States', 1200],
      [
        'Moth Debugging Services',
        'moth-debugging.example',
        'COMPUTER_SOFTWARE',
        'Arlington',
        'United States',
        12,
      ],
    ],
    contacts: [
      ['Richard', 'Bloch', 0, 'Programmer', 'CONNECTED', 'customer'],
      ['John', 'Mauchly', 2, 'Co-founder', 'OPEN_DEAL', 'opportunity'],
      ['Presper', 'Eckert', 2, 'Chief Engineer', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['Betty', 'Holberton', 1, 'Lead Programmer', 'OPEN', 'lead'],
      ['Charles', 'Phillips', 4, 'Chair', 'CONNECTED', 'customer'],
      ['Robert', 'Campbell', 0, 'Researcher', 'NEW', 'subscriber'],
      ['Kathleen', 'Booth', 5, 'Systems Architect', 'ATTEMPTED_TO_CONTACT', 'lead'],
      ['Adele', 'Koss', 1, 'Software Engineer', 'BAD_TIMING', 'marketingqualifiedlead'],
      ['Frances', 'Holberton', 3, 'Data Officer', 'OPEN_DEAL', 'opportunity'],
      ['Mary', 'Hawes', 5, 'Product Manager', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['Elmer', 'Sperry', 6, 'Director', 'UNQUALIFIED', 'other'],
      ['Nora', 'Moser', 4, 'Secretary', 'NEW', 'lead'],
      ['Ruth', 'Brendel', 7, 'Owner', 'CONNECTED', 'customer'],
      ['Herman', 'Goldstine', 2, 'Advisor', 'OPEN', 'lead'],
      ['Lois', 'Haibt', 1, 'Analyst', 'ATTEMPTED_TO_CONTACT', 'marketingqualifiedlead'],
    ],
    deals: [
      ['FLOW-MATIC training', 22000, 'closedwon', '2025-01-31', 'medium', 1, 3],
      ['COBOL compiler rollout', 180000, 'decisionmakerboughtin', '2025-07-31', 'high', 3, 8],
      ['UNIVAC support renewal', 64000, 'contractsent', '2025-06-15', 'high', 2, 1],
      ['Mark I documentation', 9500, 'appointmentscheduled', '2025-08-20', 'low', 0, 0],
      ['Business language standard', 41000, 'qualifiedtobuy', '2025-10-01', 'medium', 4, 4],
      ['Debugging retainer', 12000, 'closedlost', '2025-04-30', 'low', 7, 12],
    ],
  },
  {
    colleagues: [
      ['Joan', 'Clarke', 'joan.clarke@example.com'],
      ['Gordon', 'Welchman', 'gordon.welchman@example.com'],
    ],
    team: 'Hut 8 Accounts',
    companies: [
      [
        'Government Code and Cypher School',
        'gccs.example',
        'DEFENSE_SPACE',
        'Bletchley',
        'United Kingdom',
        400,
      ],
      [
        'British Tabulating Machine Co',
        'btm.example',
        'COMPUTER_HARDWARE',
        'Letchworth',
        'United Kingdom',
        700,
      ],
      ['National Physical Laboratory', 'npl.example', 'RESEARCH', 'Teddington', 'United Kingdom', 350],
      ['Ferranti', 'ferranti.example', 'COMPUTER_HARDWARE', 'Manchester', 'United Kingdom', 2500],
      [
        'Manchester Computing Lab',
        'manchester-computing.example',
        'HIGHER_EDUCATION',
        'Manchester',
        'United Kingdom',
        90,
      ],
      [
        'Post Office Research Station',
        'dollis-hill.example',
        'TELECOMMUNICATIONS',
        'London',
        'United Kingdom',
        600,
      ],
      ['Morphogenesis Bio', 'morphogenesis.example', 'BIOTECHNOLOGY', 'Cambridge', 'United Kingdom', 20],
      [
        'Imitation Game Software',
        'imitation-game.example',
        'COMPUTER_SOFTWARE',
        'London',
        'United Kingdom',
        35,
      ],
    ],
    contacts: [
      ['Dilly', 'Knox', 0, 'Chief Cryptanalyst', 'CONNECTED', 'customer'],
      ['Harold', 'Keen', 1, 'Engineer', 'OPEN_DEAL', 'opportunity'],
      ['John', 'Womersley', 2, 'Superintendent', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['Vivian', 'Bowden', 3, 'Sales Manager', 'OPEN', 'lead'],
      ['Max', 'Newman', 4, 'Professor', 'CONNECTED', 'customer'],
      ['Tommy', 'Flowers', 5, 'Engineer', 'OPEN_DEAL', 'opportunity'],
      ['Hugh', 'Alexander', 0, 'Head of Hut 8', 'ATTEMPTED_TO_CONTACT', 'lead'],
      ['Christopher', 'Strachey', 4, 'Programmer', 'NEW', 'subscriber'],
      ['Cicely', 'Popplewell', 4, 'Programmer', 'BAD_TIMING', 'marketingqualifiedlead'],
      ['Donald', 'Michie', 6, 'Scientist', 'IN_PROGRESS', 'salesqualifiedlead'],
      ['Robin', 'Gandy', 7, 'Advisor', 'UNQUALIFIED', 'other'],
      ['Mavis', 'Batey', 0, 'Cryptanalyst', 'NEW', 'lead'],
      ['Dorothy', 'Hodgkin', 6, 'Chief Scientist', 'OPEN', 'lead'],
      ['Bill', 'Tutte', 5, 'Mathematician', 'CONNECTED', 'customer'],
      ['Audrey', 'Bates', 2, 'Computer', 'ATTEMPTED_TO_CONTACT', 'marketingqualifiedlead'],
    ],
    deals: [
      ['Bombe production run', 210000, 'closedwon', '2025-02-14', 'high', 1, 1],
      ['ACE design study', 56000, 'presentationscheduled', '2025-07-10', 'medium', 2, 2],
      ['Mark 1 programming course', 14000, 'qualifiedtobuy', '2025-08-29', 'low', 4, 4],
      ['Colossus maintenance', 88000, 'contractsent', '2025-06-20', 'high', 5, 5],
      ['Pattern formation models', 27000, 'appointmentscheduled', '2025-09-15', 'medium', 6, 9],
      ['Chatbot evaluation', 19000, 'closedlost', '2025-05-02', 'low', 7, 10],
    ],
  },
];

const SEED_EPOCH = Date.UTC(2025, 0, 6, 9, 0, 0);
const HOUR = 3_600_000;

function newRecord(
  portal: Portal,
  type: ObjectTypeName,
  at: number,
  properties: Record<string, string>,
): CrmRecord {
  const record: CrmRecord = {
    id: allocateId(portal),
    properties: new Map(Object.entries(properties)),
    createdAt: at,
    updatedAt: at,
    archived: false,
    associations: new Map(),
  };
  stampSystemProperties(type, record);
  portal.objects[type].set(record.id, record);
  return record;
}

function emailLocalPart(first: string, last: string): string {
  return `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '');
}

export function seedPortal(user: EmulatedUser, index: number): Portal {
  const seed = SEEDS[index % SEEDS.length]!;
  const identity = portalIdentityOf(user.id);
  const portalNumber = index + 1;
  const portal: Portal = {
    user,
    hubId: identity.hubId,
    hubDomain: identity.hubDomain,
    recentCalls: [],
    rateLimited: 0,
    owners: [],
    objects: { companies: new Map(), contacts: new Map(), deals: new Map() },
    nextId: portalNumber * 100_000 + 1,
  };

  const team = { id: String(portalNumber * 1000 + 1), name: seed.team, primary: true };
  const [first = user.name, ...rest] = user.name.split(' ');
  const people: Array<[string, string, string]> = [[first, rest.join(' '), user.email], ...seed.colleagues];
  portal.owners = people.map(([firstName, lastName, email], i): Owner => {
    const at = SEED_EPOCH - 30 * 24 * HOUR + i * HOUR;
    return {
      id: String(81_000_000 + portalNumber * 100 + i + 1),
      email,
      firstName,
      lastName,
      userId: i === 0 ? Number(user.id) : 72_000_000 + portalNumber * 100 + i,
      createdAt: at,
      updatedAt: at,
      archived: false,
      teams: [team],
    };
  });
  const ownerId = (i: number) => portal.owners[i % portal.owners.length]!.id;

  let clock = SEED_EPOCH;
  const tick = () => {
    clock += 7 * HOUR;
    return clock;
  };

  const companies = seed.companies.map(([name, domain, industry, city, country, employees], i) =>
    newRecord(portal, 'companies', tick(), {
      name,
      domain,
      website: `https://www.${domain}`,
      industry,
      city,
      country,
      numberofemployees: String(employees),
      lifecyclestage: i % 3 === 0 ? 'customer' : 'lead',
      hubspot_owner_id: ownerId(i),
    }),
  );

  const contacts = seed.contacts.map(
    ([firstname, lastname, companyIndex, jobtitle, leadStatus, stage], i) => {
      const company = companies[companyIndex]!;
      const domain = company.properties.get('domain')!;
      const record = newRecord(portal, 'contacts', tick(), {
        firstname,
        lastname,
        email: `${emailLocalPart(firstname, lastname)}@${domain}`,
        phone: `+44 20 7946 ${String(portalNumber * 1000 + i).padStart(4, '0')}`,
        company: company.properties.get('name')!,
        jobtitle,
        hs_lead_status: leadStatus,
        lifecyclestage: stage,
        hubspot_owner_id: ownerId(i),
      });
      associate(portal, 'contacts', record.id, 'companies', company.id);
      return record;
    },
  );

  seed.deals.forEach(([dealname, amount, dealstage, closeDate, priority, companyIndex, contactIndex], i) => {
    const record = newRecord(portal, 'deals', tick(), {
      dealname,
      amount: String(amount),
      dealstage,
      pipeline: 'default',
      closedate: new Date(`${closeDate}T00:00:00.000Z`).toISOString(),
      hs_priority: priority,
      dealtype: i % 2 === 0 ? 'newbusiness' : 'existingbusiness',
      hubspot_owner_id: ownerId(i),
      good_deal: amount >= 50_000 ? 'true' : 'false',
    });
    associate(portal, 'deals', record.id, 'companies', companies[companyIndex]!.id);
    associate(portal, 'deals', record.id, 'contacts', contacts[contactIndex]!.id);
  });

  return portal;
}
