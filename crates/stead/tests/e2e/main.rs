//! End-to-end tests: the real `stead` binary in temporary state directories, real
//! processes, real sockets and real signals (SIGSTOP stands in for a laptop sleep,
//! SIGKILL for a crash).

mod api;
mod bad_input;
mod cluster;
mod compat;
mod connections;
mod dashboard;
mod disk;
mod ensure;
mod fires;
mod gate;
mod guard;
mod harness;
mod hostile;
mod http;
mod lifecycle;
mod openapi;
mod partition;
mod postgres;
mod private_pg;
mod recovery;
mod resumer;
mod retention;
mod runs;
mod scheduler;
mod soak;
mod tls;
