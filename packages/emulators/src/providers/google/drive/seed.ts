import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import type { EmulatedUser, ProviderContext } from '../../../core/types.js';
import { type DriveFile, GOOGLE_MIME } from '../shared.js';

/** A 33-character id shaped like Drive's file ids, derived from a name so it survives resets. */
export function driveIdFrom(seed: string): string {
  return `1${createHash('sha256').update(seed).digest('base64url').slice(0, 32)}`;
}

/** Drive's root folder ids have their own look (`0AK…Uk9PVA`). */
export function driveRootIdFor(userId: string): string {
  return `0A${createHash('sha256').update(`root:${userId}`).digest('base64url').slice(0, 11)}Uk9PVA`;
}

/** A shared drive's id, which is also its root folder's, has the same look. */
export function sharedDriveIdFor(userId: string): string {
  return `0A${createHash('sha256').update(`shared-drive:${userId}`).digest('base64url').slice(0, 11)}Uk9PVA`;
}

export const GOOGLE_PRESENTATION = 'application/vnd.google-apps.presentation';

function pdf(title: string, line: string): Buffer {
  const text = `BT /F1 18 Tf 72 720 Td (${title}) Tj 0 -28 Td /F1 12 Tf (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([len, typed, crc]);
}

/** A small real PNG (a colour gradient), so image viewers and type sniffers accept it. */
function png(width: number, height: number, seed: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) {
    const row = y * (1 + width * 3);
    for (let x = 0; x < width; x++) {
      rows[row + 1 + x * 3] = (x * 255) / width;
      rows[row + 2 + x * 3] = (y * 255) / height;
      rows[row + 3 + x * 3] = seed;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(rows)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

interface DriveSeedSet {
  folder: string;
  pdf: { name: string; title: string; line: string };
  png: string;
  text: { name: string; body: string };
  csv: { name: string; body: string };
  slides: { name: string; text: string };
  /** A shared drive the user is a member of, holding one text file. */
  shared: { drive: string; file: { name: string; body: string } };
}

const SEEDS: Record<string, DriveSeedSet> = {
  'ada.lovelace@example.com': {
    folder: 'Analytical Engine',
    pdf: {
      name: 'Sketch of the Analytical Engine.pdf',
      title: 'Sketch of the Analytical Engine',
      line: 'Notes by the translator, 1843.',
    },
    png: 'engine-diagram.png',
    text: {
      name: 'Note G.txt',
      body: "Note G: a method for computing Bernoulli numbers with the Engine.\nIt's the first published algorithm.\n",
    },
    csv: {
      name: 'bernoulli-numbers.csv',
      body: 'n,numerator,denominator\n0,1,1\n1,-1,2\n2,1,6\n4,-1,30\n6,1,42\n8,-1,30\n',
    },
    slides: { name: 'Lecture: poetical science', text: 'Poetical science\nImagination meets mathematics.' },
    shared: {
      drive: 'Analytical Society',
      file: {
        name: 'Difference Engine funding.txt',
        body: 'Treasury grants for the Difference Engine: 17,000 pounds by 1842.\nMinutes kept by the Analytical Society.\n',
      },
    },
  },
  'grace.hopper@example.com': {
    folder: 'Compilers',
    pdf: { name: 'A-0 System manual.pdf', title: 'A-0 System', line: 'The first compiler, 1952.' },
    png: 'first-bug.png',
    text: {
      name: 'nanosecond.txt',
      body: 'A nanosecond is 11.8 inches of wire.\nHand these out at every lecture.\n',
    },
    csv: {
      name: 'cobol-committee.csv',
      body: 'name,organization\nGrace Hopper,Remington Rand\nJean Sammet,Sylvania\nMary Hawes,Burroughs\n',
    },
    slides: {
      name: 'Future of programming',
      text: 'The most dangerous phrase: we have always done it this way.',
    },
    shared: {
      drive: 'Harvard Computation Lab',
      file: {
        name: 'Mark I operating notes.txt',
        body: 'The Mark I performs three additions per second.\nTape every bug into the logbook.\n',
      },
    },
  },
  'alan.turing@example.com': {
    folder: 'Computable Numbers',
    pdf: {
      name: 'On Computable Numbers.pdf',
      title: 'On Computable Numbers',
      line: 'With an application to the Entscheidungsproblem.',
    },
    png: 'bombe-wiring.png',
    text: {
      name: 'imitation game.txt',
      body: 'Can machines think?\nReplace the question with the imitation game.\n',
    },
    csv: { name: 'morphogenesis-samples.csv', body: 'sample,a,b\n1,0.12,0.34\n2,0.18,0.29\n3,0.25,0.22\n' },
    slides: {
      name: 'Computing machinery and intelligence',
      text: 'Computing machinery and intelligence\nThe imitation game.',
    },
    shared: {
      drive: 'Hut 8',
      file: {
        name: 'banburismus.txt',
        body: 'Banburismus: scoring the overlap of two messages in decibans.\nKept in the Hut 8 shared drive.\n',
      },
    },
  },
};

/**
 * Seeds the user's Drive: the root folder ("My Drive"), a project folder and one file of each common
 * kind (PDF, PNG, plain text, CSV) plus a native Slides deck, which Drive can export but not download,
 * and a shared drive the user is a member of, with one text file. Sheets and Docs add their own
 * native files afterwards.
 */
/** A seeded file: the fields a seed gives, and how many days ago it was last changed. */
type SeedFile = Omit<DriveFile, 'id' | 'ownerId' | 'trashed' | 'starred' | 'createdTime' | 'modifiedTime'> & {
  daysAgo: number;
  starred?: boolean;
};

export function seedDrive(user: EmulatedUser, ctx: ProviderContext): Map<string, DriveFile> {
  const now = ctx.clock();
  const drive = new Map<string, DriveFile>();
  const seed = SEEDS[user.email] ?? (SEEDS['ada.lovelace@example.com'] as DriveSeedSet);
  const rootId = driveRootIdFor(user.id);
  const at = (daysAgo: number) => new Date(now - daysAgo * 86_400_000).toISOString();
  drive.set(rootId, {
    id: rootId,
    name: 'My Drive',
    mimeType: GOOGLE_MIME.folder,
    parents: [],
    createdTime: at(400),
    modifiedTime: at(400),
    trashed: false,
    starred: false,
    ownerId: user.id,
    extra: { rootFolderId: rootId, isRoot: true },
  });
  const add = (key: string, file: SeedFile) => {
    const { daysAgo, ...rest } = file;
    const id = driveIdFrom(`${user.id}:${key}`);
    drive.set(id, {
      ...rest,
      id,
      ownerId: user.id,
      trashed: false,
      starred: file.starred ?? false,
      createdTime: at(daysAgo + 3),
      modifiedTime: at(daysAgo),
    });
    return id;
  };
  const folder = add('folder', {
    name: seed.folder,
    mimeType: GOOGLE_MIME.folder,
    parents: [rootId],
    daysAgo: 30,
  });
  add('pdf', {
    name: seed.pdf.name,
    mimeType: 'application/pdf',
    parents: [folder],
    description: seed.pdf.line,
    content: pdf(seed.pdf.title, seed.pdf.line),
    daysAgo: 20,
    starred: true,
  });
  add('png', {
    name: seed.png,
    mimeType: 'image/png',
    parents: [folder],
    content: png(16, 16, user.email.length * 7),
    daysAgo: 12,
  });
  add('text', {
    name: seed.text.name,
    mimeType: 'text/plain',
    parents: [rootId],
    content: Buffer.from(seed.text.body),
    daysAgo: 5,
  });
  add('csv', {
    name: seed.csv.name,
    mimeType: 'text/csv',
    parents: [rootId],
    content: Buffer.from(seed.csv.body),
    daysAgo: 2,
  });
  add('slides', {
    name: seed.slides.name,
    mimeType: GOOGLE_PRESENTATION,
    parents: [folder],
    daysAgo: 8,
    extra: { text: seed.slides.text },
  });
  seedSharedDrive(drive, user, seed.shared, at, add);
  return drive;
}

/** The user's shared drive: its root folder carries the drive's id and name, and its items the drive's id. */
function seedSharedDrive(
  drive: Map<string, DriveFile>,
  user: EmulatedUser,
  shared: DriveSeedSet['shared'],
  at: (daysAgo: number) => string,
  add: (key: string, file: SeedFile) => string,
): void {
  const sharedId = sharedDriveIdFor(user.id);
  drive.set(sharedId, {
    id: sharedId,
    name: shared.drive,
    mimeType: GOOGLE_MIME.folder,
    parents: [],
    createdTime: at(200),
    modifiedTime: at(200),
    trashed: false,
    starred: false,
    ownerId: user.id,
    extra: { isRoot: true, driveId: sharedId },
  });
  add('shared-text', {
    name: shared.file.name,
    mimeType: 'text/plain',
    parents: [sharedId],
    content: Buffer.from(shared.file.body),
    daysAgo: 9,
    extra: { driveId: sharedId },
  });
}
