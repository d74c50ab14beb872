//! Bristol Fashion.
