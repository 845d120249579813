//! The rho binary (placeholder).
fn main() {}
