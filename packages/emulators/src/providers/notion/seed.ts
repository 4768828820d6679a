import type { EmulatedUser } from '../../core/types.js';
import { propertyId, stableId } from './ids.js';
import type {
  BlockContent,
  BlockRecord,
  DatabaseRecord,
  PageRecord,
  Parent,
  PropertySchema,
  PropertyValue,
  Workspace,
} from './model.js';
import { makeOption } from './properties.js';
import { type RichText, text } from './rich-text.js';
import { workspaceOf } from './users.js';

/** Seeded objects date from a fixed week, so their timestamps (like their ids) never change. */
const SEED_EPOCH = Date.parse('2025-01-06T09:00:00.000Z');
const MINUTE = 60_000;

/** Content that differs per workspace, so tests can tell whose data they see. */
interface Theme {
  notesTitle: string;
  roadmapTitle: string;
  intro: string;
  code: string;
  language: string;
  tasks: Array<{
    name: string;
    status: string;
    priority: string;
    estimate: number;
    due: string;
    done: boolean;
    tags: string[];
  }>;
}

const themes: Record<string, Theme> = {
  'ada.lovelace@example.com': {
    notesTitle: 'Analytical Engine Notes',
    roadmapTitle: 'Engine Roadmap',
    intro:
      'The Analytical Engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.',
    code: 'def bernoulli(n):\n    return [b for b in range(n)]',
    language: 'python',
    tasks: [
      {
        name: 'Translate Menabrea memoir',
        status: 'Done',
        priority: 'High',
        estimate: 8,
        due: '2025-01-10',
        done: true,
        tags: ['Writing'],
      },
      {
        name: 'Write Note G',
        status: 'In progress',
        priority: 'High',
        estimate: 13,
        due: '2025-01-24',
        done: false,
        tags: ['Writing', 'Math'],
      },
      {
        name: 'Compute Bernoulli numbers',
        status: 'In progress',
        priority: 'Medium',
        estimate: 5,
        due: '2025-02-03',
        done: false,
        tags: ['Math'],
      },
      {
        name: 'Review punched card design',
        status: 'Not started',
        priority: 'Low',
        estimate: 3,
        due: '2025-02-14',
        done: false,
        tags: ['Hardware'],
      },
      {
        name: 'Send letters to Babbage',
        status: 'Not started',
        priority: 'Medium',
        estimate: 1,
        due: '2025-01-31',
        done: false,
        tags: [],
      },
    ],
  },
  'grace.hopper@example.com': {
    notesTitle: 'Compiler Design Notes',
    roadmapTitle: 'COBOL Roadmap',
    intro: 'It is much easier to apologize than it is to get permission.',
    code: 'IDENTIFICATION DIVISION.\nPROGRAM-ID. HELLO.',
    language: 'plain text',
    tasks: [
      {
        name: 'Finish A-0 compiler',
        status: 'Done',
        priority: 'High',
        estimate: 21,
        due: '2025-01-09',
        done: true,
        tags: ['Compiler'],
      },
      {
        name: 'Draft FLOW-MATIC spec',
        status: 'In progress',
        priority: 'High',
        estimate: 8,
        due: '2025-01-28',
        done: false,
        tags: ['Language', 'Writing'],
      },
      {
        name: 'Log the first bug',
        status: 'Done',
        priority: 'Low',
        estimate: 1,
        due: '2025-01-07',
        done: true,
        tags: ['Hardware'],
      },
      {
        name: 'Prepare nanosecond wires',
        status: 'Not started',
        priority: 'Medium',
        estimate: 2,
        due: '2025-02-11',
        done: false,
        tags: ['Teaching'],
      },
    ],
  },
  'katherine.johnson@example.com': {
    notesTitle: 'Trajectory Calculations',
    roadmapTitle: 'Mission Roadmap',
    intro: 'Like what you do, and then you will do your best.',
    code: 'x = v0 * cos(theta) * t',
    language: 'javascript',
    tasks: [
      {
        name: 'Verify orbital equations',
        status: 'Done',
        priority: 'High',
        estimate: 13,
        due: '2025-01-08',
        done: true,
        tags: ['Math'],
      },
      {
        name: 'Plot re-entry window',
        status: 'In progress',
        priority: 'High',
        estimate: 8,
        due: '2025-01-22',
        done: false,
        tags: ['Math', 'Flight'],
      },
      {
        name: 'Check IBM 7090 output',
        status: 'Not started',
        priority: 'Medium',
        estimate: 5,
        due: '2025-02-05',
        done: false,
        tags: ['Computing'],
      },
    ],
  },
};

class Seeder {
  private tick = 0;
  constructor(
    readonly ws: Workspace,
    readonly scope: string,
  ) {}

  /** Each seeded object is a minute younger than the previous one, so orderings are stable. */
  private time(): number {
    this.tick += 1;
    return SEED_EPOCH + this.tick * MINUTE;
  }

  private tracked(id: string, parent: Parent) {
    const time = this.time();
    const actor = this.ws.owner.id;
    return {
      id,
      parent,
      createdTime: time,
      lastEditedTime: time,
      createdBy: actor,
      lastEditedBy: actor,
      inTrash: false,
    };
  }

  page(key: string, parent: Parent, title: string, icon: string | null): PageRecord {
    const page: PageRecord = {
      ...this.tracked(stableId(`${this.scope}:page:${key}`), parent),
      values: new Map([['title', [text(title)]]]),
      icon: icon ? { type: 'emoji', emoji: icon } : null,
      cover: null,
      childIds: [],
    };
    this.ws.pages.set(page.id, page);
    if (parent.type === 'page_id') this.ws.pages.get(parent.page_id)?.childIds.push(page.id);
    return page;
  }

  block(key: string, container: PageRecord | BlockRecord, type: string, content: BlockContent): BlockRecord {
    const parent: Parent = this.ws.pages.has(container.id)
      ? { type: 'page_id', page_id: container.id }
      : { type: 'block_id', block_id: container.id };
    const block: BlockRecord = {
      ...this.tracked(stableId(`${this.scope}:block:${key}`), parent),
      type,
      content,
      childIds: [],
    };
    this.ws.blocks.set(block.id, block);
    container.childIds.push(block.id);
    return block;
  }

  database(key: string, parent: PageRecord, title: string, schema: PropertySchema[]): DatabaseRecord {
    const db: DatabaseRecord = {
      ...this.tracked(stableId(`${this.scope}:database:${key}`), { type: 'page_id', page_id: parent.id }),
      title: [text(title)],
      description: [text('Everything on our plate, with owners and due dates.')],
      schema,
      icon: { type: 'emoji', emoji: '✅' },
      cover: null,
      isInline: false,
    };
    this.ws.databases.set(db.id, db);
    parent.childIds.push(db.id);
    return db;
  }

  row(key: string, db: DatabaseRecord, values: Map<string, PropertyValue>): PageRecord {
    const page: PageRecord = {
      ...this.tracked(stableId(`${this.scope}:row:${key}`), { type: 'database_id', database_id: db.id }),
      values,
      icon: null,
      cover: null,
      childIds: [],
    };
    this.ws.pages.set(page.id, page);
    return page;
  }

  comment(key: string, page: PageRecord, discussion: string, author: string, body: string): void {
    const time = this.time();
    const member = this.ws.identity.members.find((m) => m.id === author);
    this.ws.comments.push({
      id: stableId(`${this.scope}:comment:${key}`),
      parent: { type: 'page_id', page_id: page.id },
      discussionId: stableId(`${this.scope}:discussion:${discussion}`),
      createdTime: time,
      lastEditedTime: time,
      createdBy: author,
      richText: [text(body)],
      displayName: { type: 'user', resolved_name: member?.name ?? null },
    });
  }
}

const rt = (content: string, color = 'default'): BlockContent => ({ rich_text: [text(content)], color });

function tasksSchema(databaseId: string): PropertySchema[] {
  const scope = (name: string) => `${databaseId}:${propertyId(`${databaseId}:${name}`)}`;
  const property = (name: string, type: string, config: Record<string, unknown> = {}): PropertySchema => ({
    id: type === 'title' ? 'title' : propertyId(`${databaseId}:${name}`),
    name,
    type,
    config,
    description: null,
  });
  const statusScope = scope('Status');
  const notStarted = makeOption(statusScope, 'Not started', 'default');
  const inProgress = makeOption(statusScope, 'In progress', 'blue');
  const done = makeOption(statusScope, 'Done', 'green');
  const options = (name: string, entries: Array<[string, string]>) =>
    entries.map(([option, color]) => makeOption(scope(name), option, color));
  return [
    property('Name', 'title'),
    property('Status', 'status', {
      options: [notStarted, inProgress, done],
      groups: [
        {
          id: stableId(`group:${statusScope}:todo`),
          name: 'To-do',
          color: 'gray',
          option_ids: [notStarted.id],
        },
        {
          id: stableId(`group:${statusScope}:progress`),
          name: 'In progress',
          color: 'blue',
          option_ids: [inProgress.id],
        },
        {
          id: stableId(`group:${statusScope}:complete`),
          name: 'Complete',
          color: 'green',
          option_ids: [done.id],
        },
      ],
    }),
    property('Priority', 'select', {
      options: options('Priority', [
        ['High', 'red'],
        ['Medium', 'yellow'],
        ['Low', 'gray'],
      ]),
    }),
    property('Estimate', 'number', { format: 'number' }),
    property('Due', 'date'),
    property('Done', 'checkbox'),
    property('Tags', 'multi_select', {
      options: options('Tags', [
        ['Writing', 'purple'],
        ['Math', 'blue'],
        ['Hardware', 'brown'],
        ['Compiler', 'orange'],
        ['Language', 'green'],
        ['Teaching', 'pink'],
        ['Flight', 'red'],
        ['Computing', 'gray'],
      ]),
    }),
    property('Assignee', 'people'),
  ];
}

function optionId(schema: PropertySchema, name: string): string | null {
  return (
    ((schema.config.options as Array<{ id: string; name: string }> | undefined) ?? []).find(
      (o) => o.name === name,
    )?.id ?? null
  );
}

/** One user's workspace: notes with nested blocks, a roadmap holding the Tasks database, comments. */
export function seedWorkspace(owner: EmulatedUser): Workspace {
  const identity = workspaceOf(owner);
  const ws: Workspace = {
    owner,
    identity,
    pages: new Map(),
    blocks: new Map(),
    databases: new Map(),
    comments: [],
    bots: new Set(),
  };
  const theme = themes[owner.email] ?? themes['ada.lovelace@example.com']!;
  const s = new Seeder(ws, owner.id);
  const workspace: Parent = { type: 'workspace', workspace: true };
  const teammate = identity.members[1]?.id ?? owner.id;

  const notes = s.page('notes', workspace, theme.notesTitle, '📓');
  s.block('notes:h1', notes, 'heading_1', { ...rt('Overview'), is_toggleable: false });
  s.block('notes:intro', notes, 'paragraph', {
    rich_text: [text(theme.intro), text(' Read more', { italic: true }, 'https://example.com/notes')],
    color: 'default',
  });
  s.block('notes:h2-todo', notes, 'heading_2', { ...rt('This week'), is_toggleable: false });
  s.block('notes:todo-1', notes, 'to_do', { ...rt('Review last week’s results'), checked: true });
  s.block('notes:todo-2', notes, 'to_do', { ...rt('Plan the next experiment'), checked: false });
  s.block('notes:todo-3', notes, 'to_do', { ...rt('Share notes with the team'), checked: false });
  s.block('notes:h2-ideas', notes, 'heading_2', { ...rt('Ideas'), is_toggleable: false });
  const idea = s.block('notes:idea-1', notes, 'bulleted_list_item', rt('Automate the tedious parts'));
  s.block('notes:idea-1a', idea, 'bulleted_list_item', rt('Start with the most repeated step'));
  s.block('notes:idea-2', notes, 'bulleted_list_item', rt('Write everything down'));
  s.block('notes:code', notes, 'code', {
    caption: [],
    rich_text: [text(theme.code)],
    language: theme.language,
  });
  const toggle = s.block('notes:toggle', notes, 'toggle', rt('Details'));
  s.block('notes:toggle-1', toggle, 'paragraph', rt('Hidden until someone opens the toggle.'));
  s.block('notes:toggle-2', toggle, 'numbered_list_item', rt('First step'));
  s.block('notes:toggle-3', toggle, 'numbered_list_item', rt('Second step'));
  s.block('notes:divider', notes, 'divider', {});
  s.block('notes:quote', notes, 'quote', rt(theme.intro));

  const roadmap = s.page('roadmap', workspace, theme.roadmapTitle, '🗺️');
  s.block('roadmap:intro', roadmap, 'paragraph', rt('Where we are going and what is left to do.'));
  const dbId = stableId(`${owner.id}:database:tasks`);
  const db = s.database('tasks', roadmap, 'Tasks', tasksSchema(dbId));
  const [, status, priority, estimate, due, doneProp, tags, assignee] = db.schema as [
    PropertySchema,
    PropertySchema,
    PropertySchema,
    PropertySchema,
    PropertySchema,
    PropertySchema,
    PropertySchema,
    PropertySchema,
  ];
  theme.tasks.forEach((task, index) => {
    const values = new Map<string, PropertyValue>([
      ['title', [text(task.name)] satisfies RichText[]],
      [status.id, optionId(status, task.status)],
      [priority.id, optionId(priority, task.priority)],
      [estimate.id, task.estimate],
      [due.id, { start: task.due, end: null, time_zone: null }],
      [doneProp.id, task.done],
      [tags.id, task.tags.map((t) => optionId(tags, t)).filter((id): id is string => id !== null)],
      [assignee.id, [index % 2 === 0 ? owner.id : teammate]],
    ]);
    s.row(`task-${index + 1}`, db, values);
  });

  const meeting = s.page('meeting', { type: 'page_id', page_id: roadmap.id }, 'Meeting Notes', '🗒️');
  s.block('meeting:agenda', meeting, 'heading_3', { ...rt('Agenda'), is_toggleable: false });
  s.block('meeting:item-1', meeting, 'numbered_list_item', rt('Status of open tasks'));
  s.block('meeting:item-2', meeting, 'numbered_list_item', rt('Next milestones'));
  s.block('meeting:callout', meeting, 'callout', {
    ...rt('Decisions go in the roadmap.'),
    icon: { type: 'emoji', emoji: '💡' },
    color: 'gray_background',
  });

  s.comment('c1', notes, 'd1', owner.id, 'Can someone double-check the second to-do?');
  s.comment('c2', notes, 'd1', teammate, 'On it, I will report back tomorrow.');
  s.comment('c3', notes, 'd1', owner.id, 'Thanks!');
  s.comment('c4', notes, 'd2', teammate, 'Love the code sample.');
  return ws;
}

/** Ids of a user's seeded objects, stable across resets, for tests and docs. */
export function notionSeedIds(userId: string) {
  return {
    notesPageId: stableId(`${userId}:page:notes`),
    roadmapPageId: stableId(`${userId}:page:roadmap`),
    meetingPageId: stableId(`${userId}:page:meeting`),
    tasksDatabaseId: stableId(`${userId}:database:tasks`),
    toggleBlockId: stableId(`${userId}:block:notes:toggle`),
    introBlockId: stableId(`${userId}:block:notes:intro`),
    firstDiscussionId: stableId(`${userId}:discussion:d1`),
    taskPageId: (n: number) => stableId(`${userId}:row:task-${n}`),
  };
}
