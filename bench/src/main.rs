//! rho benchmarks (being written).
fn main() {}
