//! hop
