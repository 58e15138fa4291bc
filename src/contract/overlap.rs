//! TEMPORARY STAND-IN (replaced by the h-globs branch): glob-set intersection API.
//! Answers `MayOverlap` for everything, which is sound but useless.

/// The paths one side may touch.
pub struct PathSet {
    _levels: usize,
}

/// Whether two path sets share a path.
pub enum Overlap {
    /// No path is in both.
    Disjoint,
    /// `witness` is in both.
    Overlap { witness: String },
    /// Could not be told.
    MayOverlap,
}

impl PathSet {
    /// Paths every level allows.
    pub fn new(
        levels: &[(Vec<String>, Vec<String>)],
        _ignore_case: bool,
    ) -> Result<PathSet, String> {
        Ok(PathSet {
            _levels: levels.len(),
        })
    }
    /// Paths any of `rules` match.
    pub fn globs(rules: &[String], _ignore_case: bool) -> Result<PathSet, String> {
        Ok(PathSet {
            _levels: rules.len(),
        })
    }
    /// The paths an effective contract lets its task change.
    pub fn from_effective(e: &crate::contract::Effective) -> Result<PathSet, String> {
        Ok(PathSet {
            _levels: e.levels.len(),
        })
    }
}

/// Is there a path both sets contain?
pub fn intersect(_a: &PathSet, _b: &PathSet) -> Overlap {
    Overlap::MayOverlap
}
