//! [`SetupError`]: why a scenario could not be set up or run, the error of every module here.

/// A boxed error, for the set-up steps of a scenario.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;
