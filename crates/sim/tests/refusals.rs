//! Keys a run would not read, or read to no effect, are refused with what is allowed.

use nictune_sim::scenario::builtin;

#[test]
fn a_key_of_an_absent_host_is_refused() {
    let mut s = builtin::get("linerate-10g-64b").unwrap();
    s.assign("client.itr=0").unwrap();
    let e = s.run().unwrap_err().to_string();
    assert!(e.contains("client.itr") && e.contains("no client"), "{e}");
    // `hosts.*` sets whichever hosts there are.
    let mut s = builtin::get("linerate-10g-64b").unwrap();
    s.assign("hosts.itr=0").unwrap();
    s.assign("duration=0.001").unwrap();
    assert!(s.run().is_ok());
}

#[test]
fn dim_takes_only_on_or_off() {
    let mut s = builtin::get("seed-e1000-rr").unwrap();
    s.assign("driver=dim").unwrap();
    s.assign("server.itr=20000").unwrap();
    let e = s.run().unwrap_err().to_string();
    assert!(e.contains("server.itr") && e.contains("0 (adaptive"), "{e}");
}

#[test]
fn an_on_off_stream_needs_an_on_period() {
    let mut s = builtin::get("linerate-10g-64b").unwrap();
    s.assign("workload.pattern=onoff").unwrap();
    let e = s.assign("workload.on_ms=0").unwrap_err().to_string();
    assert!(e.contains("workload.on_ms"), "{e}");
}
