/**
 * The known name nearest to a mistyped one (edit distance at most a third of its length). Case and
 * separators do not count: "google-calendar" and "Google Calendar" are google_calendar.
 */
export function closestName(name: string, known: string[]): string | undefined {
  let best: string | undefined;
  const wanted = plainName(name);
  let bestDistance = Math.max(2, Math.floor(wanted.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(wanted, plainName(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** A name as a person means it: case and separators do not count. */
export function plainName(name: string): string {
  return name.toLowerCase().replace(/[-_\s.]/g, '');
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}
