// Package sim is ftsim's bottom layer: the discrete-event engine, the
// simulated cluster and the object runtime that workloads and protocols run
// on. It knows nothing of any workload or protocol.
//
//   - The engine (Engine) is a clock in integer nanoseconds (Time) and a
//     radix-heap event queue whose ties break by a sequence number, so that
//     a run is a pure function of its configuration and seed. Scheduling an
//     event allocates nothing (BenchmarkPHOLD: 0 allocs/op).
//   - The cluster (Config) is nodes with cores and a compute rate; a network
//     (flat, torus or fat tree) that charges latency, bandwidth through each
//     end's interface and optional CPU per byte and per message; storage
//     tiers (memory, disk, a shared PFS, a buddy's memory); failures
//     (exponential, Weibull, traces, scripted at a time or a progress, whole
//     failure domains), heartbeat or oracle detection, spares and repair.
//   - The runtime (Runtime) runs a Workload's message-driven objects on the
//     nodes and calls a Protocol's hooks on every send, arrival, dispatch,
//     timer and detected failure; the protocol acts back through the
//     Runtime's methods (control messages, snapshots and restores, storage,
//     epochs, spares, migration).
//
// Randomness comes from independent streams derived from the seed, a name
// and an index (Engine.Stream: a node's failures, a failure domain's, a
// node's heartbeats, the network's jitter), so that every protocol in a
// comparison faces the same failures.
package sim
