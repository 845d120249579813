//! rho configuration paths (placeholder).
