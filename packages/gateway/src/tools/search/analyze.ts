import { stem } from './stem.js';

/**
 * Words that say nothing about which tool fits: left out of both the tools' text and the tasks.
 * Kept short on purpose: "me", "my", "all" and "new" choose tools ("for the authenticated user",
 * a listing, a create), so they stay.
 */
const STOPWORDS = new Set(
  (
    'a an the and or of to in on at by for from with into onto as is are be been being was were it its ' +
    'this that these those there their then than so such do does did can could would should will shall ' +
    'please i we you he she they them us our your which who whom what when where how if else also just ' +
    'about some any via per want need like let lets im ive have has had'
  ).split(' '),
);

/**
 * A text as the index's terms: split at every non-alphanumeric character and at camel-case
 * boundaries (`listEvents`, `HTTPServer`), lower-cased, stop words left out, each word stemmed.
 * `github_pulls_list` and "list the pull requests" meet at `github`, `pull`, `list`. A camel-case
 * word gives its parts and itself (`startHistoryId`: `starthistoryid`, `start`, `history`, `id`);
 * with `known`, only itself when `known` holds it (a task's "GitHub" is `github`, not also `git`
 * and `hub`).
 */
export function terms(text: string, known?: (term: string) => boolean): string[] {
  const out: string[] = [];
  const add = (word: string) => {
    if (STOPWORDS.has(word)) return;
    const same = SAME_WORD[word];
    if (same) out.push(...same);
    else out.push(stem(word));
  };
  for (const token of text.split(/[^A-Za-z0-9]+/)) {
    if (!token) continue;
    const parts = split(token);
    if (parts.length > 1 && /[a-z][A-Z]/.test(token)) {
      const whole = token.toLowerCase();
      if (/^[a-z]+$/.test(whole) && whole.length <= 40) {
        add(whole);
        if (known?.(stem(whole))) continue;
      }
    }
    for (const part of parts) add(part);
  }
  return out;
}

/** A token's lower-cased words, split at camel case and digits. */
function split(token: string): string[] {
  // Lower-case, or an acronym's plural ("PRs", "APIs"), which camel case would split: one word.
  if (/^[a-z]+$/.test(token) || /^[A-Z]{2,}s$/.test(token))
    return token.length <= 40 ? [token.toLowerCase()] : [];
  return token
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/ |(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])/)
    .filter((w) => w.length > 0 && w.length <= 40);
}

/**
 * Words that are one word spelled two ways (an abbreviation, British spelling): both sides of the
 * index read them as one term, as if the text had the same spelling.
 */
const SAME_WORD: Record<string, string[]> = {
  repository: ['repo'],
  repositories: ['repo'],
  repos: ['repo'],
  organization: ['org'],
  organizations: ['org'],
  organisation: ['org'],
  organisations: ['org'],
  orgs: ['org'],
  pr: ['pull', 'request'],
  prs: ['pull', 'request'],
  email: ['mail'],
  emails: ['mail'],
  // Compounds the APIs write as one word.
  freebusy: ['free', 'busy'],
  untrash: ['un', 'trash'],
};

/**
 * Whether a text asks for several of something ("the open pull requests", "messages from Ann"):
 * a plural word that is not one of the few that end in s anyway. Stemming makes "messages" and
 * "message" one term; this keeps what told a listing from a read of one item.
 */
export function plural(text: string): boolean {
  for (const token of text.split(/[^A-Za-z]+/)) {
    const word = token.toLowerCase();
    if (word.length > 3 && /[^su]s$/.test(word) && !STOPWORDS.has(word) && !NOT_PLURAL.has(word)) return true;
  }
  return false;
}

const NOT_PLURAL = new Set([
  'this',
  'its',
  'has',
  'was',
  'does',
  'always',
  'perhaps',
  'whereas',
  'across',
  'atlas',
  'canvas',
  'alias',
  'bias',
  'gas',
  'yes',
  'less',
  'unless',
  'status',
  'analysis',
  'basis',
  'axis',
  'news',
  'series',
  'species',
  'access',
  'address',
  'process',
  'progress',
  'success',
  'business',
  'class',
  'pass',
  'miss',
]);

/**
 * What a task's first word says it wants: to read ("list", "show", "what …?") or to change
 * something ("send", "archive", "star"); undefined when the first word says neither. Tasks are
 * written as requests or questions, so the first word is the verb or the question word.
 */
export function intent(text: string): 'read' | 'write' | undefined {
  const first = /[A-Za-z]+/.exec(text)?.[0]?.toLowerCase();
  if (!first) return undefined;
  if (READ_VERBS.has(first)) return 'read';
  if (WRITE_VERBS.has(first)) return 'write';
  return undefined;
}

const READ_VERBS = new Set(
  (
    'get list show find search read look fetch retrieve view see check count download export compare ' +
    'what which who whom whose how when where why is are was were does do did can has have tell give-me'
  ).split(' '),
);

const WRITE_VERBS = new Set(
  (
    'create add make send delete remove update change edit move rename archive cancel schedule share ' +
    'invite star unstar fork merge close reopen publish post upload set turn put mark save store commit ' +
    'approve request ask trigger run rerun lock unlock transfer follow unfollow reply comment leave clear ' +
    'empty replace append write fill record push restore stop copy open start book insert submit assign ' +
    'label tag pin unpin block unblock invite accept decline dismiss enable disable grant revoke let give'
  ).split(' '),
);
