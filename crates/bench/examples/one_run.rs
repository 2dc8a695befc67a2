//! Runs one short measurement and prints its JSON (used to capture test fixtures):
//! `cargo run -p nictune-bench --example one_run -- testbed|loopback`.

use nictune_bench::{run, BenchSpec, ServerSide, TestKind, Testbed};
use nictune_core::progress::NoProgress;
use nictune_core::units::Nanos;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let where_ = std::env::args().nth(1).unwrap_or_else(|| "loopback".into());
    let mut spec = BenchSpec::new(TestKind::Rr);
    spec.duration = Nanos::from_secs(2);
    spec.client_cpu = Some(0);
    spec.server_cpu = Some(1);
    let result = if where_ == "testbed" {
        let bed = Testbed::create(nictune_linux::write::privilege())?;
        run(&spec, ServerSide::Testbed(&bed), &NoProgress)?
    } else {
        run(&spec, ServerSide::Loopback, &NoProgress)?
    };
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}
