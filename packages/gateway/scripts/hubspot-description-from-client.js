// Reconstructs OpenAPI 3.0 descriptions of HubSpot's CRM, associations, owners, engagements,
// properties, pipelines and files APIs from the published client @hubspot/api-client, whose
// `lib/codegen/<area>/` is generated (openapi-generator, typescript) from HubSpot's own OpenAPI
// documents. No npm package ships those documents, so they are rebuilt from the generated code's
// structure: each exported API's request factory (path template, HTTP method, required-parameter
// checks, where each parameter goes and the type it is serialised as, the body's model type and
// media types), its response processor (the answer's model type per status) and the models'
// `attributeTypeMap` and declarations (property names, types, formats, enums, optional or not).
// Nothing of the client's prose (its doc comments) is read or written.
//
// Usage, with the client installed for the run only (14.0.1 declares Node >= 22, which the project
// does not promise, so it is no dependency of the project's; reading it as data works on Node 20):
//   npm install --no-save @hubspot/api-client@14.0.1 -w packages/gateway
//   node scripts/hubspot-description-from-client.js   (writes descriptions/hubspot/*.json)
// The files it writes are data, committed; the build does not run this script.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const PACKAGE = '@hubspot/api-client';
const CLIENT_ROOT = dirname(require.resolve(`${PACKAGE}/package.json`));
const CLIENT_VERSION = JSON.parse(readFileSync(join(CLIENT_ROOT, 'package.json'), 'utf8')).version;
const CODEGEN = join(CLIENT_ROOT, 'lib/codegen');
const OUT = join(dirname(fileURLToPath(import.meta.url)), '../descriptions/hubspot');

/** The client's areas rebuilt, each as one document (HubSpot publishes one per API). */
export const AREAS = [
  { file: 'crm-contacts', dir: 'crm/contacts', title: 'CRM Contacts' },
  { file: 'crm-companies', dir: 'crm/companies', title: 'CRM Companies' },
  { file: 'crm-deals', dir: 'crm/deals', title: 'CRM Deals' },
  { file: 'crm-tickets', dir: 'crm/tickets', title: 'CRM Tickets' },
  { file: 'crm-line-items', dir: 'crm/line_items', title: 'CRM Line Items' },
  { file: 'crm-products', dir: 'crm/products', title: 'CRM Products' },
  { file: 'crm-quotes', dir: 'crm/quotes', title: 'CRM Quotes' },
  { file: 'crm-objects', dir: 'crm/objects', title: 'CRM Objects' },
  { file: 'crm-calls', dir: 'crm/objects/calls', title: 'CRM Calls' },
  { file: 'crm-emails', dir: 'crm/objects/emails', title: 'CRM Emails' },
  { file: 'crm-meetings', dir: 'crm/objects/meetings', title: 'CRM Meetings' },
  { file: 'crm-notes', dir: 'crm/objects/notes', title: 'CRM Notes' },
  { file: 'crm-tasks', dir: 'crm/objects/tasks', title: 'CRM Tasks' },
  { file: 'crm-communications', dir: 'crm/objects/communications', title: 'CRM Communications' },
  { file: 'crm-postal-mail', dir: 'crm/objects/postal_mail', title: 'CRM Postal Mail' },
  { file: 'crm-associations-v3', dir: 'crm/associations', title: 'CRM Associations v3' },
  { file: 'crm-associations-v3-types', dir: 'crm/associations/schema', title: 'CRM Association Types v3' },
  { file: 'crm-associations-v4', dir: 'crm/associations/v4', title: 'CRM Associations v4' },
  {
    file: 'crm-associations-v4-schema',
    dir: 'crm/associations/v4/schema',
    title: 'CRM Association Schema v4',
  },
  { file: 'crm-owners', dir: 'crm/owners', title: 'CRM Owners' },
  { file: 'crm-properties', dir: 'crm/properties', title: 'CRM Properties' },
  { file: 'crm-pipelines', dir: 'crm/pipelines', title: 'CRM Pipelines' },
  { file: 'files', dir: 'files', title: 'Files' },
];

const read = (path) => readFileSync(path, 'utf8');

/** The API classes an area exports (its index), e.g. BasicApi, BatchApi, SearchApi. */
function exportedApis(dir) {
  const index = read(join(dir, 'index.js'));
  return [...index.matchAll(/defineProperty\(exports, "(\w+Api)"/g)].map((m) => m[1]);
}

/** Splits a TypeScript parameter list at top-level commas. */
function splitTopLevel(text) {
  const parts = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if ('<({['.includes(ch)) depth++;
    if ('>)}]'.includes(ch)) depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** The request factory's methods of an API, from its declaration: parameters, types, optional. */
function declaredMethods(dts, api) {
  const factory = dts.split(`export declare class ${api}RequestFactory`)[1]?.split('\n}\n')[0] ?? '';
  const methods = new Map();
  for (const m of factory.matchAll(/^ {4}(\w+)\((.*)\): Promise<RequestContext>;$/gm)) {
    const params = splitTopLevel(m[2])
      .filter((p) => !p.startsWith('_options'))
      .map((p) => {
        const [, name, optional, type] = /^(\w+)(\??): (.*)$/.exec(p);
        return { name, optional: optional === '?', type };
      });
    methods.set(m[1], params);
  }
  const processor = dts.split(`export declare class ${api}ResponseProcessor`)[1] ?? '';
  const answers = new Map();
  for (const m of processor.matchAll(
    /^ {4}(\w+)WithHttpInfo\(response: ResponseContext\): Promise<HttpInfo<(.*)>>;$/gm,
  )) {
    answers.set(m[1], m[2]);
  }
  return { methods, answers };
}

/** Each method's body in the generated JavaScript, by name, within one class. */
function methodBodies(js, className) {
  const start = js.indexOf(`class ${className} `);
  if (start < 0) return new Map();
  const end = js.indexOf('\nclass ', start + 1);
  const text = js.slice(start, end < 0 ? undefined : end);
  const bodies = new Map();
  const heads = [...text.matchAll(/^ {4}(\w+)\(([^)]*)\) \{$/gm)];
  heads.forEach((head, i) => {
    bodies.set(head[1], text.slice(head.index, heads[i + 1]?.index ?? text.length));
  });
  return bodies;
}

// ---------------------------------------------------------------------------------------------
// Types: the client's TypeScript types (and serialised types) as OpenAPI schemas.

const MODEL_REF = (name) => ({ $ref: `#/components/schemas/${name}` });

/** `'a' | 'b'` as an enum. */
function literalUnion(type) {
  const parts = type.split('|').map((p) => p.trim());
  if (parts.length && parts.every((p) => /^'[^']*'$/.test(p))) return parts.map((p) => p.slice(1, -1));
  return undefined;
}

/**
 * A type of the client as a schema: `string`, `number` (integer when its format says so),
 * `boolean`, `Date` (a date-time string), `any`, `Array<T>`, `Set<T>`, `{ [key: string]: T; }`,
 * a literal union, or a model (a component, resolved later) or an enum of a model.
 */
function typeSchema(type, format, area, nullable = false) {
  const t = type.trim().replace(/\s*\|\s*null$/, '');
  const isNullable = nullable || /\|\s*null$/.test(type.trim());
  const withNull = (schema) => (isNullable ? { ...schema, nullable: true } : schema);
  const array = /^(Array|Set)<(.*)>$/.exec(t);
  if (array) {
    return withNull({
      type: 'array',
      items: typeSchema(array[2], '', area),
      ...(array[1] === 'Set' ? { uniqueItems: true } : {}),
    });
  }
  const map = /^\{\s*\[key: string\]: (.*?);?\s*\}$/s.exec(t);
  if (map) return withNull({ type: 'object', additionalProperties: typeSchema(map[1], '', area) });
  const literals = literalUnion(t);
  if (literals) return withNull({ type: 'string', enum: literals });
  switch (t) {
    case 'string':
      return withNull(
        format === 'binary' ? { type: 'string', format: 'binary' } : { type: 'string', ...formatOf(format) },
      );
    case 'number':
      return withNull(
        format === 'int32' || format === 'int64'
          ? { type: 'integer', format }
          : { type: 'number', ...(format ? { format } : {}) },
      );
    case 'boolean':
      return withNull({ type: 'boolean' });
    case 'Date':
      return withNull({ type: 'string', format: format === 'date' ? 'date' : 'date-time' });
    case 'any':
    case 'object':
      return {};
    case 'HttpFile':
      return { type: 'string', format: 'binary' };
    default: {
      const enumValues = area.enums.get(t);
      if (enumValues)
        return withNull({ type: typeof enumValues[0] === 'number' ? 'number' : 'string', enum: enumValues });
      area.wanted.add(t);
      return isNullable ? { allOf: [MODEL_REF(t)], nullable: true } : MODEL_REF(t);
    }
  }
}

function formatOf(format) {
  return format && format !== '' ? { format } : {};
}

/** The enums a model file declares (`export declare enum XEnum { A = "a" }`). */
function declaredEnums(dts) {
  const enums = new Map();
  for (const m of dts.matchAll(/export declare enum (\w+) \{([^}]*)\}/g)) {
    const values = [...m[2].matchAll(/=\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?)/g)].map((v) =>
      JSON.parse(v[1]),
    );
    enums.set(m[1], values);
  }
  return enums;
}

/** A model's declared properties: optional or not, and whether null is allowed. */
function declaredProperties(dts, name) {
  const body =
    dts.split(`export declare class ${name} {`)[1]?.split('static readonly discriminator')[0] ?? '';
  const props = new Map();
  // A property is `'name'?: type;` (a type may span lines, as maps do).
  for (const m of body.matchAll(/^ {4}'([^']+)'(\??): ([\s\S]*?);\n(?= {4}'|\s*$| {4}static)/gm)) {
    props.set(m[1], {
      optional: m[2] === '?',
      nullable: /\|\s*null;?\s*\}?\s*$/.test(m[3]) && !/^\{/.test(m[3].trim()),
    });
  }
  return props;
}

/** A model of the area as a component schema (and the models and enums it reaches, as wanted). */
function modelSchema(area, component) {
  // The generator renames models whose names are TypeScript's own (`Error` is `ModelError`).
  const name = existsSync(join(area.dir, 'models', `${component}.js`)) ? component : `Model${component}`;
  const jsPath = join(area.dir, 'models', `${name}.js`);
  const dtsPath = join(area.dir, 'models', `${name}.d.ts`);
  if (!existsSync(jsPath)) throw new Error(`${area.dir}: no model ${component}`);
  const dts = read(dtsPath);
  for (const [enumName, values] of declaredEnums(dts)) area.enums.set(enumName, values);
  const union = new RegExp(`export declare type ${name} = ([^;]+);`).exec(dts);
  if (union) {
    return { oneOf: union[1].split('|').map((part) => typeSchema(part.trim(), '', area)) };
  }
  const model = require(jsPath)[name];
  const map = model?.attributeTypeMap;
  if (!Array.isArray(map)) return { type: 'object' };
  const declared = declaredProperties(dts, name);
  const properties = {};
  const required = [];
  for (const attr of map) {
    const facts = declared.get(attr.name) ?? { optional: true, nullable: false };
    properties[attr.baseName] = typeSchema(attr.type, attr.format, area, facts.nullable);
    if (!facts.optional) required.push(attr.baseName);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Operations

const STATUS_TEXT = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 207: 'Multi-Status' };

/** One operation of an API, from its request factory and response processor. */
function operation(area, api, name, body, params, answerBody) {
  const path = /const localVarPath = '([^']+)'/.exec(body)?.[1];
  const method = /HttpMethod\.([A-Z]+)/.exec(body)?.[1];
  if (!path || !method) throw new Error(`${area.dir} ${api}.${name}: no path or method`);
  const required = new Set([...body.matchAll(/RequiredError\("\w+", "\w+", "(\w+)"\)/g)].map((m) => m[1]));
  const byArg = new Map(params.map((p) => [p.name, p]));
  const parameters = [];
  // Path: `.replace('{' + 'name' + '}', encodeURIComponent(String(arg)))`.
  for (const m of body.matchAll(
    /\.replace\('\{' \+ '(\w+)' \+ '\}', encodeURIComponent\(String\((\w+)\)\)\)/g,
  )) {
    const param = byArg.get(m[2]);
    parameters.push({
      name: m[1],
      in: 'path',
      required: true,
      schema: typeSchema(param?.type ?? 'string', '', area),
    });
  }
  // Query and header parameters, with the type and format each is serialised as.
  const serialised =
    /if \((\w+) !== undefined\) \{\s*(?:const serializedParams = ObjectSerializer_1\.ObjectSerializer\.serialize\(\w+, "([^"]*)", "([^"]*)"\);\s*for \(const serializedParam of serializedParams\) \{\s*requestContext\.appendQueryParam\("([^"]+)"|requestContext\.set(Query|Header)Param\("([^"]+)", ObjectSerializer_1\.ObjectSerializer\.serialize\(\w+, "([^"]*)", "([^"]*)"\)\))/g;
  for (const m of body.matchAll(serialised)) {
    const arg = m[1];
    const [where, wire, type, format] = m[4]
      ? ['query', m[4], m[2], m[3]]
      : [m[5].toLowerCase(), m[6], m[7], m[8]];
    const declared = byArg.get(arg);
    // A literal union declared on the method is an enum the serialised type does not say.
    const literal = declared && literalUnion(declared.type.replace(/^Array<(.*)>$/, '$1'));
    let schema = typeSchema(type, format, area);
    if (literal)
      schema =
        schema.type === 'array'
          ? { ...schema, items: { type: 'string', enum: literal } }
          : { type: 'string', enum: literal };
    parameters.push({
      name: wire,
      in: where,
      required: required.has(arg),
      ...(schema.type === 'array' && where === 'query' ? { style: 'form', explode: true } : {}),
      schema,
    });
  }
  const op = {
    operationId: `${method.toLowerCase()}-${path}_${name}`,
    tags: [api.replace(/Api$/, '')],
    ...(parameters.length ? { parameters } : {}),
  };
  // A JSON (or other serialised) body: `serialize(arg, "Type", ""), contentType)`.
  const jsonBody = /ObjectSerializer\.serialize\((\w+), "([^"]+)", "([^"]*)"\), contentType\)/.exec(body);
  const mediaTypes = (/getPreferredMediaType\(\[([^\]]*)\]\)/.exec(body)?.[1] ?? '')
    .match(/"[^"]+"/g)
    ?.map((s) => JSON.parse(s));
  if (jsonBody) {
    op.requestBody = {
      required: required.has(jsonBody[1]),
      content: Object.fromEntries(
        (mediaTypes ?? ['application/json']).map((t) => [
          t,
          { schema: typeSchema(jsonBody[2], jsonBody[3], area) },
        ]),
      ),
    };
  }
  // A form body: `localVarFormParams.append('name', …)` for each field.
  const formTypes = /canConsumeForm\)\(\[([^\]]*)\]\)/
    .exec(body)?.[1]
    .match(/'[^']+'/g)
    ?.map((s) => s.slice(1, -1));
  if (formTypes) {
    const properties = {};
    const formRequired = [];
    for (const m of body.matchAll(
      /if \((\w+) !== undefined\) \{\s*(?:if \(localVarFormParams instanceof form_data_1\.default\) \{\s*)?localVarFormParams\.append\('([^']+)'/g,
    )) {
      const declared = byArg.get(m[1]);
      properties[m[2]] = typeSchema(
        declared?.type ?? 'string',
        declared?.type === 'HttpFile' ? 'binary' : '',
        area,
      );
      if (required.has(m[1])) formRequired.push(m[2]);
    }
    op.requestBody = {
      required: formRequired.length > 0,
      content: Object.fromEntries(
        formTypes.map((t) => [
          t,
          {
            schema: {
              type: 'object',
              properties,
              ...(formRequired.length ? { required: formRequired } : {}),
            },
          },
        ]),
      ),
    };
  }
  op.responses = responses(area, answerBody);
  return { path, method: method.toLowerCase(), op };
}

/** The statuses an answer is read at and the model of each; any other is HubSpot's Error. */
function responses(area, body) {
  const out = {};
  for (const m of body.matchAll(
    /isCodeInRange\)\("(\d+)", response\.httpStatusCode\)\) \{\s*(?:const body = ObjectSerializer_1\.ObjectSerializer\.deserialize\(ObjectSerializer_1\.ObjectSerializer\.parse\(yield response\.body\.text\(\), contentType\), "([^"]+)", "([^"]*)"\)|return new http_1\.HttpInfo\(response\.httpStatusCode, response\.headers, response\.body, undefined\))/g,
  )) {
    const code = m[1] === '0' ? 'default' : m[1];
    const type = m[2];
    out[code] = {
      description: code === 'default' ? 'Error' : (STATUS_TEXT[code] ?? 'Success'),
      ...(type && type !== 'void'
        ? { content: { 'application/json': { schema: typeSchema(type, m[3], area) } } }
        : {}),
    };
  }
  if (!Object.keys(out).length) out.default = { description: 'Success' };
  return out;
}

/** Rebuilds one area's document. */
export function describeArea(entry) {
  const area = { dir: join(CODEGEN, entry.dir), enums: new Map(), wanted: new Set() };
  const paths = {};
  for (const api of exportedApis(area.dir)) {
    const dts = read(join(area.dir, 'apis', `${api}.d.ts`));
    const js = read(join(area.dir, 'apis', `${api}.js`));
    const { methods } = declaredMethods(dts, api);
    const requests = methodBodies(js, `${api}RequestFactory`);
    const answers = methodBodies(js, `${api}ResponseProcessor`);
    for (const [name, params] of methods) {
      const found = operation(
        area,
        api,
        name,
        requests.get(name) ?? '',
        params,
        answers.get(`${name}WithHttpInfo`) ?? '',
      );
      paths[found.path] ??= {};
      const item = paths[found.path];
      if (item[found.method]) throw new Error(`${entry.dir}: ${found.method} ${found.path} twice`);
      item[found.method] = found.op;
    }
  }
  const schemas = {};
  // Models reach others; enums are found in the models that declare them, so the loop runs until
  // no model is wanted that is not there yet.
  while ([...area.wanted].some((n) => !(n in schemas))) {
    for (const name of [...area.wanted]) {
      if (!(name in schemas)) schemas[name] = modelSchema(area, name);
    }
  }
  // An enum found after a reference to it was made as a model: it is a model no more.
  for (const name of Object.keys(schemas)) {
    if (area.enums.has(name)) {
      const values = area.enums.get(name);
      schemas[name] = { type: typeof values[0] === 'number' ? 'number' : 'string', enum: values };
    }
  }
  return {
    openapi: '3.0.0',
    info: {
      title: entry.title,
      version: `v3 (rebuilt from ${PACKAGE} ${CLIENT_VERSION})`,
      'x-source': `${PACKAGE} ${CLIENT_VERSION}, lib/codegen/${entry.dir}`,
    },
    servers: [{ url: 'https://api.hubapi.com' }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(OUT, { recursive: true });
  let operations = 0;
  for (const entry of AREAS) {
    const doc = describeArea(entry);
    const count = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    operations += count;
    writeFileSync(join(OUT, `${entry.file}.json`), `${JSON.stringify(doc, null, 1)}\n`);
  }
  console.log(
    `rebuilt ${operations} operations of ${AREAS.length} HubSpot APIs from ${PACKAGE} ${CLIENT_VERSION}`,
  );
}
