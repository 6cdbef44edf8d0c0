//! `stead monitor`: the per-run monitor, started by the server with its plan on stdin.

pub fn run() -> i32 {
    stead_monitor::main()
}
