/**
 * actorstore: private, transactional, strongly consistent storage for a stateful object
 * (Durable Object style), on WASM SQLite (sql.js), running anywhere JavaScript runs.
 *
 * @packageDocumentation
 */

export type { AlarmInvocationInfo, PlannedAlarm } from "./alarms/alarm-scheduler";
export { ALARM_HISTORY_LIMIT, AlarmScheduler } from "./alarms/alarm-scheduler";
export { DurableObject } from "./context/durable-object";
export type { ObjectClass, ObjectContextOptions, ObjectInstance } from "./context/object-context";
export { ABORT_MESSAGE, BLOCK_CONCURRENCY_TIMEOUT_MESSAGE, ObjectContext } from "./context/object-context";
export { ObjectId } from "./context/object-id";
export { ObjectState } from "./context/object-state";
export { RpcTarget } from "./context/rpc-target";
export { formatBookmark, isBookmark, parseBookmark } from "./durability/bookmarks";
export type { CommitRecord, KvWrite, SqlWrite } from "./durability/commit-record";
export { DelegatingPersistence } from "./durability/delegating-persistence";
export { openFilePersistence } from "./durability/file-persistence";
export type {
  IndexedDbFactoryLike,
  IndexedDbKeyRangeLike,
  IndexedDbPersistenceOptions,
} from "./durability/indexeddb-persistence";
export { IndexedDbPersistence, openIndexedDbPersistence } from "./durability/indexeddb-persistence";
export { createMemoryPersistence, MemoryPersistence } from "./durability/memory-persistence";
export type {
  HistoryChunk,
  LoadResult,
  PersistenceAdapter,
  SnapshotInfo,
  VersionedMeta,
} from "./durability/persistence";
export { isFencedError, loadWithRecords, streamHistory } from "./durability/persistence";
export type { EngineStatement, EngineValue, SqlEngine, SqlEngineFactory } from "./engine/engine";
export type { SqlJsLoadOptions } from "./engine/sqljs";
export { loadSqlJsEngine } from "./engine/sqljs";
export type { ActorStoreErrorCode } from "./errors";
export { ACTOR_STORE_ERROR_CODES, ActorStoreError } from "./errors";
export type { AlarmIndex, AlarmIndexEntry } from "./host/alarm-index";
export { directoryAlarmIndex, memoryAlarmIndex } from "./host/alarm-index";
export type {
  HostEnv,
  HostedClass,
  HostedObjectInfo,
  HostedObjectState,
  HostStats,
  NamespaceClasses,
  ObjectHostOptions,
} from "./host/host-types";
export { DEFAULT_IDLE_TIMEOUT_MS } from "./host/host-types";
export type {
  GetObjectOptions,
  NewUniqueIdOptions,
  ObjectJurisdiction,
  ObjectStub,
  Remote,
  RemoteMembers,
  RemoteResult,
  RemoteStub,
  RequestInitLike,
  RequestLike,
  RpcMethods,
} from "./host/namespace";
export { ObjectNamespace } from "./host/namespace";
export { ObjectHost } from "./host/object-host";
export type { PersistenceFactory } from "./host/options";
export { directoryPerObject, memoryPerObject } from "./host/options";
export type { StorageLimits } from "./limits";
export { DEFAULT_LIMITS } from "./limits";
export type { ObjectStorageOptions } from "./storage/object-storage";
export { DEFAULT_RETENTION_MS, DEFAULT_SNAPSHOT_LOG_CAP_BYTES, ObjectStorage } from "./storage/object-storage";
export type {
  Backend,
  GetAlarmOptions,
  GetOptions,
  ListOptions,
  PutOptions,
  SetAlarmOptions,
  SyncKvListOptions,
} from "./storage/options";
export { SqlStorage } from "./storage/sql/sql-storage";
export type { StorageHost } from "./storage/storage-host";
export { SyncKvStorage } from "./storage/sync-kv";
export { ObjectTransaction } from "./storage/transaction";
export type { Clock, TimerHandle, TimerOptions } from "./util/clock";
export { FakeClock, systemClock } from "./util/clock";
