/**
 * The wire schema of Scalekit's agent-actions API, taken from the generated descriptors the pinned
 * official SDK ships (`@scalekit-sdk/node`, a runtime dependency for this reason): the services
 * Portico serves are exactly the ones that SDK calls, byte for byte, and upgrading the schema is a
 * version bump checked by the SDK's own test suite in test/scalekit-sdk.test.ts.
 */
export {
  type ConnectedAccount,
  ConnectedAccountForListSchema,
  ConnectedAccountSchema,
  ConnectedAccountService,
  ConnectorStatus,
  ConnectorType,
  type CreateConnectedAccount,
  type UpdateConnectedAccount,
} from '@scalekit-sdk/node/lib/pkg/grpc/scalekit/v1/connected_accounts/connected_accounts_pb.js';
export {
  ConnectionSchema,
  ConnectionService,
  ConnectionStatus,
  ConnectionType,
  ListConnectionSchema,
} from '@scalekit-sdk/node/lib/pkg/grpc/scalekit/v1/connections/connections_pb.js';
export {
  ErrorInfoSchema,
  ToolErrorInfoSchema,
  ValidationErrorInfoSchema,
} from '@scalekit-sdk/node/lib/pkg/grpc/scalekit/v1/errdetails/errdetails_pb.js';
export {
  ScopedToolSchema,
  ToolSchema,
  ToolService,
} from '@scalekit-sdk/node/lib/pkg/grpc/scalekit/v1/tools/tools_pb.js';
