/**
 * actorstore/testkit: test your own stateful-object classes with vitest (or any runner): create an
 * object from its class on a fake clock, send it events, run due alarms, advance time, read and seed
 * its storage, and simulate a crash or a restart. See docs/testing.md.
 *
 * @example
 * ```ts
 * import { createTestObject } from "actorstore/testkit";
 *
 * const counter = await createTestObject(Counter);
 * await counter.fetch("/increment");
 * expect(await counter.get("count")).toBe(1);
 * ```
 *
 * @packageDocumentation
 */

export type { AlarmInvocationInfo, PlannedAlarm } from "../alarms/alarm-scheduler";
export type { ObjectState } from "../context/object-state";
export type { AppendFailurePoint, FailAppendOptions } from "../durability/faulty-persistence";
export { FaultyPersistence } from "../durability/faulty-persistence";
export type { HostEnv, HostedObjectInfo, HostStats } from "../host/host-types";
export type { ObjectStub } from "../host/namespace";
export { FakeClock } from "../util/clock";
export type { StartTestApiServerOptions } from "./api-server";
export { startTestApiServer, TEST_API_TOKEN } from "./api-server";
export type { CreateTestHostOptions } from "./test-host";
export { createTestHost, TestHost } from "./test-host";
export type {
  CreateTestObjectOptions,
  MethodArgs,
  MethodName,
  MethodResult,
  RestartOptions,
  TestObjectClass,
} from "./test-object";
export { createTestObject, TestObject } from "./test-object";
