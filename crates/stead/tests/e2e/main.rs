//! End-to-end tests: the real `stead` binary in temporary state directories, real
//! processes, real sockets and real signals (SIGSTOP stands in for a laptop sleep,
//! SIGKILL for a crash).

mod api;
mod bad_input;
mod chains;
mod checkpoints;
mod cluster;
mod compat;
mod conditions;
mod connections;
mod dashboard;
mod disk;
mod ensure;
mod faketime;
mod fire_path;
mod fires;
mod gate;
mod guard;
mod harness;
mod hostile;
mod http;
mod lifecycle;
mod mcp;
mod netns;
mod notify;
mod openapi;
mod overdue;
mod params;
mod partition;
mod pause;
mod postgres;
mod private_pg;
mod programs;
mod queues;
mod receiver;
mod recovery;
mod resumer;
mod retention;
mod retries;
mod reuse;
mod runs;
mod scheduler;
mod secrets;
mod sleep;
mod soak;
mod tls;
