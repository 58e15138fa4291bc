//! The patch helpers' old place: they live in `crate::common::patch` now. Kept while tests still
//! import them from here; to be removed once none does.

#[allow(unused_imports)]
pub(crate) use crate::common::patch::*;
