#!/usr/bin/env node
// The client command the MCP conformance suite runs for each client scenario: Portico's own
// `portico remote-mcp try` against the scenario's server (the URL the suite appends), with only
// what the scenario hands a client in its environment turned into that command's flags. Every
// request the scenario's servers see is the gateway's.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const portico = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const url = process.argv.at(-1);

// The tool each scenario's server offers to be called.
const TOOLS = {
  tools_call: ['add_numbers', '{"a":2,"b":3}'],
  'sse-retry': ['test_reconnection', '{}'],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults', '{}'],
};
const [tool, input] = TOOLS[scenario] ?? ['test-tool', '{}'];
const flags = ['remote-mcp', 'try', '--tool', tool, '--input', input, '--wait', '5'];
// A client the operator registered beforehand, as the scenario names it.
if (context.client_id && context.client_secret)
  flags.push('--client-id', context.client_id, '--client-secret', context.client_secret);
// The client ID metadata document URL the scenario's authorization server expects as client_id
// (a document an operator publishes; Portico's own is served only under an https public URL).
if (scenario === 'auth/basic-cimd')
  flags.push('--client-id', 'https://conformance-test.local/client-metadata.json');
const result = spawnSync(process.execPath, [portico, ...flags, url], { stdio: 'inherit' });
process.exit(result.status ?? 1);
