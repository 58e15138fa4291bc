//! The helpers' old place: they live in `crate::common` now. Kept while tests still import
//! them from here (`super::support::...`); to be removed once none does.

pub(crate) use crate::common::helpers::*;
