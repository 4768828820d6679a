import { randomBytes } from 'node:crypto';
import { driveId, driveItemId, stableGuid } from './ids.js';
import {
  type Drive,
  type DriveItem,
  graphDate,
  type MicrosoftState,
  type Site,
  type TenantData,
} from './model.js';
import { QuickXorHash } from './quick-xor-hash.js';
import { type MicrosoftUser, microsoftUsers } from './users.js';

export const MIME = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
  txt: 'text/plain',
} as const;

/** Seed dates are fixed, so listings and eTags stay the same across resets. */
function seedDate(dayOffset: number): string {
  return graphDate(Date.UTC(2024, 2, 4, 9, 15) + dayOffset * 86_400_000);
}

export function newItem(
  fields: Pick<DriveItem, 'id' | 'driveId' | 'parentId' | 'name' | 'folder' | 'createdBy'> & {
    chunks?: Buffer[];
    mimeType?: string;
    at: string;
  },
): DriveItem {
  const chunks = fields.chunks ?? [];
  const hash = new QuickXorHash();
  let size = 0;
  for (const chunk of chunks) {
    hash.update(chunk);
    size += chunk.length;
  }
  return {
    id: fields.id,
    driveId: fields.driveId,
    parentId: fields.parentId,
    name: fields.name,
    folder: fields.folder,
    chunks,
    size,
    mimeType: fields.mimeType ?? 'application/octet-stream',
    quickXorHash: hash.digest(),
    createdDateTime: fields.at,
    lastModifiedDateTime: fields.at,
    createdBy: fields.createdBy,
    lastModifiedBy: fields.createdBy,
    uniqueId: stableGuid(`item-unique:${fields.id}`).toUpperCase(),
    version: 1,
    contentVersion: 1,
  };
}

/** Recognisable stand-in bytes: a real magic number, then readable text. */
function demoBytes(kind: keyof typeof MIME, text: string): Buffer {
  switch (kind) {
    case 'pdf':
      return Buffer.from(`%PDF-1.7\n% ${text}\n%%EOF\n`);
    case 'docx':
    case 'xlsx':
      return Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from(` ${text}\n`)]);
    default:
      return Buffer.from(`${text}\n`);
  }
}

interface SeedFile {
  name: string;
  text: string;
  day: number;
}

interface SeedLibrary {
  files: SeedFile[];
  folders: Array<{ name: string; day: number; files: SeedFile[] }>;
}

function extensionOf(name: string): keyof typeof MIME {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return ext in MIME ? (ext as keyof typeof MIME) : 'txt';
}

function seedDrive(user: MicrosoftUser, site: Site, library: SeedLibrary, personal = false): Drive {
  const seed = `${user.id}:${site.path}:Documents`;
  const id = driveId(seed);
  const rootId = driveItemId(`${seed}:root`);
  const drive: Drive = {
    id,
    siteId: site.id,
    name: personal ? 'OneDrive' : 'Documents',
    description: '',
    driveType: personal ? 'business' : 'documentLibrary',
    urlName: personal ? 'Documents' : 'Shared%20Documents',
    createdDateTime: site.createdDateTime,
    lastModifiedDateTime: seedDate(30),
    rootId,
    items: new Map(),
  };
  const add = (item: DriveItem) => drive.items.set(item.id, item);
  add(
    newItem({
      id: rootId,
      driveId: id,
      parentId: null,
      name: 'root',
      folder: true,
      createdBy: user.id,
      at: site.createdDateTime,
    }),
  );
  const addFile = (parentId: string, path: string, file: SeedFile) => {
    const kind = extensionOf(file.name);
    add(
      newItem({
        id: driveItemId(`${seed}:${path}${file.name}`),
        driveId: id,
        parentId,
        name: file.name,
        folder: false,
        createdBy: user.id,
        chunks: [demoBytes(kind, file.text)],
        mimeType: MIME[kind],
        at: seedDate(file.day),
      }),
    );
  };
  for (const file of library.files) addFile(rootId, '/', file);
  for (const folder of library.folders) {
    const folderId = driveItemId(`${seed}:/${folder.name}`);
    add(
      newItem({
        id: folderId,
        driveId: id,
        parentId: rootId,
        name: folder.name,
        folder: true,
        createdBy: user.id,
        at: seedDate(folder.day),
      }),
    );
    for (const file of folder.files) addFile(folderId, `/${folder.name}/`, file);
  }
  return drive;
}

function seedSite(
  user: MicrosoftUser,
  path: string,
  displayName: string,
  description: string,
  day: number,
  host = user.tenant.sharepointHost,
): Site {
  const siteCollectionId = stableGuid(`${user.id}:site-collection:${path}`);
  const webId = stableGuid(`${user.id}:web:${path}`);
  return {
    id: `${host},${siteCollectionId},${webId}`,
    siteCollectionId,
    webId,
    hostname: host,
    path,
    name: path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1),
    displayName,
    description,
    createdDateTime: seedDate(day),
    lastModifiedDateTime: seedDate(day + 40),
    isRoot: path === '/',
    driveIds: [],
  };
}

function seedTenant(user: MicrosoftUser): TenantData {
  const org = user.tenant.name;
  const root = seedSite(user, '/', `${org} Team Site`, `Home of the ${org} intranet`, -400);
  const marketing = seedSite(
    user,
    '/sites/marketing',
    'Marketing',
    `${org} campaigns and brand assets`,
    -200,
  );
  const engineering = seedSite(
    user,
    '/sites/engineering',
    'Engineering',
    'Specifications, designs and runbooks',
    -150,
  );
  const libraries: Array<[Site, SeedLibrary]> = [
    [
      root,
      {
        files: [
          { name: 'Welcome.txt', text: `Welcome to the ${org} Team Site, ${user.givenName}!`, day: 1 },
          { name: 'Brand Guidelines.pdf', text: `${org} brand guidelines`, day: 3 },
        ],
        folders: [
          {
            name: 'Projects',
            day: 5,
            files: [
              { name: 'Roadmap 2025.docx', text: `${org} roadmap 2025`, day: 6 },
              { name: 'Budget.xlsx', text: `${org} budget, quarter by quarter`, day: 7 },
              { name: 'Meeting Notes.txt', text: 'Agreed: ship the analytical engine in Q3.', day: 8 },
            ],
          },
        ],
      },
    ],
    [
      marketing,
      {
        files: [
          { name: 'Campaign Plan.docx', text: 'Spring campaign plan', day: 10 },
          { name: 'Leads.xlsx', text: 'Qualified leads', day: 11 },
        ],
        folders: [],
      },
    ],
    [
      engineering,
      {
        files: [{ name: 'README.txt', text: 'Start with Specs/Architecture.pdf.', day: 12 }],
        folders: [
          {
            name: 'Specs',
            day: 13,
            files: [{ name: 'Architecture.pdf', text: 'System architecture', day: 14 }],
          },
        ],
      },
    ],
  ];
  const drives = new Map<string, Drive>();
  for (const [site, library] of libraries) {
    const drive = seedDrive(user, site, library);
    site.driveIds.push(drive.id);
    drives.set(drive.id, drive);
  }
  const personalSite = seedSite(
    user,
    `/personal/${user.email.replace(/[@.]/g, '_')}`,
    user.name,
    '',
    -300,
    user.tenant.sharepointHost.replace('.sharepoint.com', '-my.sharepoint.com'),
  );
  const oneDrive = seedDrive(
    user,
    personalSite,
    {
      files: [
        { name: 'Notes.txt', text: `${user.givenName}'s notes: remember the Bernoulli numbers.`, day: 20 },
      ],
      folders: [
        { name: 'Drafts', day: 21, files: [{ name: 'Ideas.docx', text: 'Ideas worth writing up', day: 22 }] },
      ],
    },
    true,
  );
  personalSite.driveIds.push(oneDrive.id);
  drives.set(oneDrive.id, oneDrive);
  return {
    user,
    sites: [root, marketing, engineering],
    followedSiteIds: [marketing.id, engineering.id],
    personalSite,
    personalDriveId: oneDrive.id,
    drives,
  };
}

export function seedMicrosoftState(): MicrosoftState {
  const tenants = new Map<string, TenantData>();
  for (const user of microsoftUsers) tenants.set(user.id, seedTenant(user));
  return {
    downloadUrlTtlSeconds: 3600,
    signingKey: randomBytes(32),
    tenants,
    uploadSessions: new Map(),
    subscriptions: new Map(),
  };
}
