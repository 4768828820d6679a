import { terms } from './analyze.js';

/**
 * Words agents use for what the providers' APIs name otherwise, in groups. A task's word also
 * looks for the other words of its groups, at a lower weight than the word itself, so the exact
 * word still ranks first: `SAME` groups name one thing (a meeting is a calendar event), `NEAR`
 * groups overlap (what one would "show" is listed or read). Only general vocabulary of the domains
 * the catalog covers belongs here (mail, calendars, files, spreadsheets, notes, CRM, code
 * hosting), never a benchmark task's wording: a group must hold for any task using one of its words.
 */
const SAME: string[][] = [
  ['mail', 'message'],
  ['meeting', 'appointment', 'event'],
  ['spreadsheet', 'sheet'],
  ['doc', 'document'],
  ['delete', 'remove', 'erase'],
  ['create', 'add', 'insert'],
  ['update', 'change', 'edit', 'modify'],
  ['get', 'read', 'fetch', 'retrieve'],
  ['search', 'find', 'lookup'],
  ['ticket', 'issue'],
  ['person', 'people', 'user'],
  ['table', 'database'],
  ['column', 'property'],
  ['folder', 'directory'],
  ['lead', 'contact', 'prospect'],
  ['deal', 'opportunity'],
  ['version', 'revision'],
  ['my', 'me', 'mine', 'authenticated'],
  ['star', 'stargazer'],
  ['conversation', 'thread'],
  ['reply', 'replies'],
  ['access', 'acl', 'permission'],
  ['share', 'permission'],
  ['occurrence', 'instance'],
];

const NEAR: string[][] = [
  ['mail', 'inbox'],
  ['delete', 'discard', 'trash', 'cancel'],
  ['create', 'new', 'make', 'open', 'upload'],
  ['update', 'rename', 'patch', 'set'],
  ['get', 'show', 'view'],
  ['list', 'show', 'every'],
  ['search', 'look', 'query'],
  ['user', 'member', 'colleague', 'teammate'],
  ['company', 'org'],
  ['table', 'data source'],
  ['row', 'entry', 'record', 'item'],
  ['column', 'field'],
  ['tab', 'sheet'],
  ['cell', 'range', 'value'],
  ['share', 'access'],
  ['copy', 'duplicate'],
  ['schedule', 'book', 'event'],
  ['free', 'busy', 'availability', 'available'],
  ['workflow', 'action', 'ci', 'pipeline'],
  ['trigger', 'dispatch', 'run'],
  ['download', 'export'],
  ['reply', 'respond'],
  ['review', 'reviewer', 'approve'],
  ['clear', 'empty', 'wipe', 'remove'],
  ['branch', 'ref'],
  ['save', 'store', 'create'],
  ['again', 're', 'rerun', 'retry'],
  ['publish', 'post', 'create'],
  ['give', 'grant', 'add'],
  ['put', 'add', 'set', 'apply'],
  ['list', 'which', 'who'],
  ['restore', 'untrash', 'undelete', 'recover'],
  ['write', 'update', 'fill'],
  ['invite', 'attendee', 'guest'],
];

/**
 * Words that point to others one way: a day or a time of day in a task is about the calendar (but
 * "calendar" in a task is not about Mondays).
 */
const POINTS_TO: Array<[string[], string[]]> = [
  [
    [
      'monday',
      'tuesday',
      'wednesday',
      'thursday',
      'friday',
      'saturday',
      'sunday',
      'tomorrow',
      'today',
      'tonight',
      'yesterday',
      'morning',
      'afternoon',
      'evening',
      'noon',
      'pm',
    ],
    ['event', 'calendar'],
  ],
];

export interface Expansion {
  term: string;
  weight: number;
}

/** One word of a task and the words it also stands for; a tool scores by the best of them. */
export interface QueryTerm {
  variants: Expansion[];
}

/** The weight of a word found through a group, against 1 for the task's own word. */
const SAME_WEIGHT = 0.7;
const NEAR_WEIGHT = 0.3;

function lookup(groups: string[][]): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const group of groups) {
    const analyzed = group.map((phrase) => terms(phrase));
    for (const [i, own] of analyzed.entries()) {
      if (own.length !== 1) continue; // a phrase is looked for, never looked up
      const set = map.get(own[0]!) ?? new Set<string>();
      for (const [j, other] of analyzed.entries()) if (j !== i) for (const t of other) set.add(t);
      set.delete(own[0]!);
      map.set(own[0]!, set);
    }
  }
  return map;
}

const SAME_TERMS = lookup(SAME);
const NEAR_TERMS = lookup(NEAR);
for (const [from, to] of POINTS_TO) {
  const targets = to.flatMap((word) => terms(word));
  for (const word of from) {
    for (const term of terms(word)) {
      const set = NEAR_TERMS.get(term) ?? new Set<string>();
      for (const target of targets) set.add(target);
      NEAR_TERMS.set(term, set);
    }
  }
}

/**
 * A task's terms, each with its groups' words. A tool scores for each of the task's words by the
 * best of its variants (never their sum: "doc" and "document" in one name are one match), and a
 * word the task says itself is no other word's variant.
 */
export function expand(queryTerms: readonly string[], plural = false): QueryTerm[] {
  const own = new Set(queryTerms);
  const out = [...own].map((term) => {
    const variants = new Map<string, number>([[term, 1]]);
    const add = (other: string, weight: number) => {
      if (!own.has(other) && (variants.get(other) ?? 0) < weight) variants.set(other, weight);
    };
    for (const other of SAME_TERMS.get(term) ?? []) add(other, SAME_WEIGHT);
    for (const other of NEAR_TERMS.get(term) ?? []) add(other, NEAR_WEIGHT);
    return { variants: [...variants].map(([t, weight]) => ({ term: t, weight })) };
  });
  // Several of something, asked for without a verb that says how, are most likely listed.
  if (plural && !own.has(LIST)) out.push({ variants: [{ term: LIST, weight: NEAR_WEIGHT }] });
  return out;
}

const LIST = terms('list')[0]!;
