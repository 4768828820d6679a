import type { QueryTerm } from './synonyms.js';

/** The fields a tool is indexed by, each with its own weight and length normalisation. */
export const FIELDS = ['name', 'description', 'parameters', 'provider'] as const;
export type Field = (typeof FIELDS)[number];

/** A document as the index takes it: the terms of each field (analyzed already). */
export type FieldTerms = Record<Field, readonly string[]>;

/**
 * BM25F weights: a word of the name counts three times one of the description; parameters and
 * the provider's names say less about what the tool does, and are short, so they are barely
 * normalised by length.
 */
const WEIGHT: Record<Field, number> = { name: 3, description: 1, parameters: 0.4, provider: 1.2 };
const LENGTH_NORMALISATION: Record<Field, number> = {
  name: 0.5,
  description: 0.75,
  parameters: 0.3,
  provider: 0,
};
const K1 = 1.2;
/** How much a task that says all of a tool's name raises its score (by half at most). */
const NAME_COVERAGE = 0.5;

interface Postings {
  id: number;
  idf: number;
  docs: Int32Array;
  /** The term's field-weighted, length-normalised frequency in each of those documents. */
  weights: Float64Array;
}

/**
 * An inverted index scored with BM25F (Robertson and Zaragoza, "The Probabilistic Relevance
 * Framework: BM25 and Beyond", 2009), with one addition for tool names: a document's score grows
 * with the share of its name the task covers. A tool's name is a summary of what it does, so a
 * task that says every word of it (weighted by rarity) is probably about it, where a longer name
 * that shares one word with the task is not. Built once from every document, then read by any
 * number of searches; everything a score needs but the task's terms is computed at build.
 */
export class Bm25Index {
  private readonly postings = new Map<string, Postings>();
  /** Each document's distinct name terms (by id), their idf, and the sum of those. */
  private readonly names: Array<{ terms: Int32Array; idfs: Float64Array; whole: number }> = [];
  /** Scratch, by term id: the weight a search gives the term (zero between searches). */
  private readonly asked: Float64Array;
  /** Scratch, by document: those one word of a search reached, and those any word did. */
  private readonly reached: Int32Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;
  /** Scratch, by document: its score in the last search, and its best variant of one word. */
  private readonly scores: Float64Array;
  private readonly best: Float64Array;
  readonly size: number;

  constructor(documents: readonly FieldTerms[]) {
    this.size = documents.length;
    const average = {} as Record<Field, number>;
    for (const field of FIELDS) {
      let total = 0;
      for (const doc of documents) total += doc[field].length;
      average[field] = documents.length ? Math.max(total / documents.length, 1) : 1;
    }
    const ubiquitous = ubiquitousTerms(documents);
    const building = new Map<string, { docs: number[]; weights: number[] }>();
    documents.forEach((doc, id) => {
      const combined = new Map<string, number>();
      for (const field of FIELDS) {
        const words = doc[field];
        if (!words.length) continue;
        const skip = ubiquitous[field];
        const b = LENGTH_NORMALISATION[field];
        const norm = 1 - b + b * (words.length / average[field]);
        const counts = new Map<string, number>();
        for (const word of words) if (!skip.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
        for (const [word, count] of counts) {
          combined.set(word, (combined.get(word) ?? 0) + (WEIGHT[field] * count) / norm);
        }
      }
      for (const [word, weight] of combined) {
        let list = building.get(word);
        if (!list) {
          list = { docs: [], weights: [] };
          building.set(word, list);
        }
        list.docs.push(id);
        list.weights.push(weight);
      }
    });
    for (const [word, list] of building) {
      const df = list.docs.length;
      this.postings.set(word, {
        id: this.postings.size,
        idf: Math.log(1 + (this.size - df + 0.5) / (df + 0.5)),
        docs: Int32Array.from(list.docs),
        weights: Float64Array.from(list.weights),
      });
    }
    this.asked = new Float64Array(this.postings.size);
    this.reached = new Int32Array(this.size);
    this.touched = new Int32Array(this.size);
    this.scores = new Float64Array(this.size);
    this.best = new Float64Array(this.size);
    for (const doc of documents) {
      const postings = [...new Set(doc.name)].flatMap((t) => this.postings.get(t) ?? []);
      const idfs = Float64Array.from(postings, (p) => p.idf);
      this.names.push({
        terms: Int32Array.from(postings, (p) => p.id),
        idfs,
        whole: idfs.reduce((a, b) => a + b, 0),
      });
    }
  }

  /** Whether any document holds the term. */
  has(term: string): boolean {
    return this.postings.has(term);
  }

  /**
   * Every document holding at least one of the task's words (or their variants): `docs` are their
   * ids and `scores[doc]` their scores. Both are views into the index's own arrays, valid until
   * the next search (searches run one at a time: JavaScript runs one anyway).
   */
  score(query: readonly QueryTerm[]): { docs: Int32Array; scores: Float64Array } {
    const { scores, best } = this;
    for (let t = 0; t < this.touchedCount; t++) scores[this.touched[t]!] = 0;
    const { asked, reached } = this;
    let touched = 0;
    const askedIds: number[] = [];
    for (const { variants } of query) {
      let reachedCount = 0;
      for (const { term, weight } of variants) {
        const list = this.postings.get(term);
        if (!list) continue;
        if (asked[list.id] === 0) askedIds.push(list.id);
        if (weight > asked[list.id]!) asked[list.id] = weight;
        const factor = weight * list.idf * (K1 + 1);
        const { docs, weights } = list;
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          const tf = weights[i]!;
          const value = (factor * tf) / (K1 + tf);
          const before = best[doc]!;
          if (before === 0) reached[reachedCount++] = doc;
          if (value > before) best[doc] = value;
        }
      }
      for (let i = 0; i < reachedCount; i++) {
        const doc = reached[i]!;
        if (scores[doc] === 0) this.touched[touched++] = doc;
        scores[doc]! += best[doc]!;
        best[doc] = 0;
      }
    }
    for (let t = 0; t < touched; t++) {
      const doc = this.touched[t]!;
      const name = this.names[doc]!;
      if (!name.whole) continue;
      let covered = 0;
      for (let i = 0; i < name.terms.length; i++) covered += name.idfs[i]! * asked[name.terms[i]!]!;
      if (covered) scores[doc]! *= 1 + NAME_COVERAGE * (covered / name.whole);
    }
    for (const id of askedIds) asked[id] = 0;
    this.touchedCount = touched;
    return { docs: this.touched.subarray(0, touched), scores };
  }
}

/** Below this many documents every term counts: a small catalog has no boilerplate to tell apart. */
const UBIQUITY_MIN_DOCUMENTS = 50;
const UBIQUITY_SHARE = 0.4;

/**
 * Per field, the terms in more than 40% of the documents: boilerplate (every compiled tool's
 * description ends "Returns …'s JSON answer as it is (a list as "items")"). Left in, such a term
 * would sit in nearly every document and drag its idf to nothing, so "list" in a task would no
 * longer tell the listing tools (whose names hold it) from the others.
 */
function ubiquitousTerms(documents: readonly FieldTerms[]): Record<Field, Set<string>> {
  const out = {} as Record<Field, Set<string>>;
  for (const field of FIELDS) {
    out[field] = new Set();
    if (documents.length < UBIQUITY_MIN_DOCUMENTS) continue;
    const df = new Map<string, number>();
    for (const doc of documents)
      for (const word of new Set(doc[field])) df.set(word, (df.get(word) ?? 0) + 1);
    for (const [word, count] of df) if (count > documents.length * UBIQUITY_SHARE) out[field].add(word);
  }
  return out;
}
