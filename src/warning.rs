//! Warnings: what a run noticed but could go on with. Each has a stable code, for
//! dashboards and scripts, and a message for people.
