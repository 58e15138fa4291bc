//! How a file changed, renames included (for `changes`; renames are paired by [`super::similarity`]).

/// How a file changed, renames included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A new file.
    Created,
    /// Content or mode changed.
    Modified,
    /// The file is gone.
    Deleted,
    /// Moved from `old_path` (its content may have changed too).
    Renamed,
}
