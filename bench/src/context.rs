//! The lines under every result table's title, saying where the figures come from.

use std::path::Path;

use crate::machine;

/// Prints the machine, how busy it was when the run started, and which `rho` binary ran.
pub fn print(load_at_start: &str, rho: &Path) {
    println!("machine:  {}", machine::describe());
    println!("load avg: {load_at_start} (at start)");
    println!("rho:      {}", rho.display());
}
