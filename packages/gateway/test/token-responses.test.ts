import { describe, expect, it } from 'vitest';
import { parseTokenResponse } from '../src/oauth/client.js';
import { getProvider } from '../src/providers/catalog.js';

// What an account keeps of a token response: the token facts go to the token columns, the rest
// (Notion's workspace, for instance) is shown as the account's metadata.
describe('token responses by provider', () => {
  it('keeps Microsoft’s extended token lifetime out of the account metadata', () => {
    const tokens = parseTokenResponse(
      {
        token_type: 'Bearer',
        access_token: 'at',
        refresh_token: 'rt',
        expires_in: 3600,
        ext_expires_in: 3600,
        scope: 'User.Read Files.ReadWrite.All',
      },
      getProvider('sharepoint'),
    );
    expect(tokens.metadata).toEqual({});
    expect(tokens.scopes).toEqual(['User.Read', 'Files.ReadWrite.All']);
  });

  it('keeps Notion’s workspace facts as metadata', () => {
    const tokens = parseTokenResponse(
      { access_token: 'at', token_type: 'bearer', workspace_id: 'w1', bot_id: 'b1' },
      getProvider('notion'),
    );
    expect(tokens.metadata).toEqual({ workspace_id: 'w1', bot_id: 'b1' });
    expect(tokens.expiresIn).toBeUndefined();
  });
});
